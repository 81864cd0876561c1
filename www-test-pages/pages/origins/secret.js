// Origin B's script: CANARY-SCRIPT-B (its body must never be answered while B is denied).
window.secretLoaded = 'CANARY-SCRIPT-B';
console.log('CANARY-CONSOLE-B: the balance is 1234');
console.error('CANARY-CONSOLE-B error');
