// Origin B's script: CANARY-SCRIPT-B (its body must never be answered while B is denied).
window.secretLoaded = 'CANARY-SCRIPT-B';
