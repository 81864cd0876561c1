//! Searching the page model: the lines a snapshot would show that match a query, with
//! their refs, a run of adjacent texts (a code editor's tokens) read as the one line it
//! shows.

use super::render::{cut_text, is_actionable, Ctx, RenderOptions, ShownRef, TEXT_MAX};
use super::{Page, RawNode, RefTable};

/// Lines of the model that match `query`, each with a ref to act on and where it sits. What
/// the snapshot shows is what is searched: a node's role, name, text, value, placeholder,
/// choices, states, tooltip and link, and a run of adjacent texts as the one line it shows
/// (a code editor's line is a text per token). Case and runs of whitespace do not count;
/// where two texts meet, the query may or may not have a space (the page may have none:
/// `count(*)` in tokens `count`, `(*)`).
pub fn find(page: &Page, refs: &mut RefTable, query: &str, max: usize) -> (Vec<String>, usize) {
    let (lines, total, _) = find_shown(page, refs, query, max, 0);
    (lines, total)
}

/// [`find`], with the refs its element lines give from line `shown_from` on (the lines
/// before it are not answered).
pub fn find_shown(
    page: &Page,
    refs: &mut RefTable,
    query: &str,
    max: usize,
    shown_from: usize,
) -> (Vec<String>, usize, Vec<ShownRef>) {
    let q = Needle::new(query);
    let opts = RenderOptions::default();
    let mut ctx = Ctx::new(page, refs, &opts);
    let runs = text_runs(page);
    let mut out = Vec::new();
    let mut total = 0;
    for (idx, n) in page.nodes.iter().enumerate() {
        let raw = &n.raw;
        // A text is searched with the texts next to it, as the one line they show; the run
        // is taken at its first text.
        let run = if raw.t.is_some() {
            match &runs[idx] {
                Some(run) => Some(run),
                None => continue,
            }
        } else {
            None
        };
        let hit = match &run {
            Some(run) => q.in_run(page, run.nodes(page)),
            None => q.in_node(raw).then_some((idx, 0)),
        };
        let Some((at, offset)) = hit else {
            continue;
        };
        // A text whose parent already matched on its name (the same text) adds nothing.
        let parent_hit = run.is_some()
            && n.parent.is_some_and(|p| {
                page.nodes[p]
                    .raw
                    .n
                    .as_deref()
                    .is_some_and(|pn| q.in_text(pn))
            });
        // A container whose child matches too is shown through that child.
        let child_hit = run.is_none()
            && !is_actionable(n)
            && n.children.iter().any(|&c| {
                let child = &page.nodes[c];
                if child.raw.t.is_some() {
                    runs[c]
                        .as_ref()
                        .is_some_and(|r| q.in_run(page, r.nodes(page)).is_some())
                } else {
                    child.raw.n.as_deref().is_some_and(|t| q.in_text(t))
                }
            });
        if parent_hit || child_hit {
            continue;
        }
        total += 1;
        if out.len() >= max {
            continue;
        }
        let mut line = match &run {
            Some(run) => run_line(page, run.nodes(page), at, offset),
            None => ctx.label(idx, true),
        };
        if out.len() < shown_from {
            ctx.shown.clear();
        }
        // Text and containers: point at the nearest element an agent can use.
        if run.is_some() || !is_actionable(n) {
            let mut up = if run.is_some() { n.parent } else { Some(idx) };
            let mut holder = None;
            while let Some(u) = up {
                if page.nodes[u].raw.i.is_some() {
                    holder = Some(u);
                    break;
                }
                up = page.nodes[u].parent;
            }
            // The element holding the matched text itself (a token of a code editor, a
            // styled span), when the nearest element of the model is only its container:
            // a click there lands on the text.
            let own = page.nodes[at]
                .raw
                .e
                .filter(|e| holder.is_none_or(|h| page.nodes[h].raw.i != Some(*e)))
                .filter(|_| holder.is_none_or(|h| !is_actionable(&page.nodes[h])));
            if let Some(e) = own {
                let r = ctx.refs.ref_for(&page.frames[page.nodes[at].frame], e);
                line.push_str(&format!(" [ref={r}]"));
            }
            match holder {
                Some(u) if u != idx => {
                    let parent = ctx.label(u, false);
                    let short: String = parent.chars().take(60).collect();
                    if let Some(r) = ctx.ref_of(u) {
                        line.push_str(&format!(" (in {short} [ref={r}])"));
                    }
                }
                Some(u) => {
                    if let Some(r) = ctx.ref_of(u) {
                        if !line.contains("[ref=") {
                            line.push_str(&format!(" [ref={r}]"));
                        }
                    }
                }
                None => {}
            }
        }
        out.push(line);
    }
    (out, total, ctx.shown)
}

/// Texts next to each other (the snapshot shows them as one line): `len` siblings from
/// `start` in the children of `parent` (the top-level nodes when `None`).
#[derive(Debug, Clone)]
struct Run {
    parent: Option<usize>,
    start: usize,
    len: usize,
}

impl Run {
    fn nodes<'p>(&self, page: &'p Page) -> &'p [usize] {
        let siblings = match self.parent {
            Some(p) => &page.nodes[p].children,
            None => &page.roots,
        };
        &siblings[self.start..self.start + self.len]
    }
}

/// For each node: the run of texts it starts, if it is the first text of one. One pass over
/// every list of children (a code editor can hold thousands of token texts side by side).
fn text_runs(page: &Page) -> Vec<Option<Run>> {
    let mut runs = vec![None; page.nodes.len()];
    let lists = std::iter::once((None, &page.roots)).chain(
        page.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (Some(i), &n.children)),
    );
    for (parent, kids) in lists {
        let mut k = 0;
        while k < kids.len() {
            if page.nodes[kids[k]].raw.t.is_none() {
                k += 1;
                continue;
            }
            let start = k;
            while k < kids.len() && page.nodes[kids[k]].raw.t.is_some() {
                k += 1;
            }
            runs[kids[start]] = Some(Run {
                parent,
                start,
                len: k - start,
            });
        }
    }
    runs
}

/// The line of a run of texts that matched: the run as the snapshot shows it, or, when the
/// match lies past what one line shows, the run from the text where the match starts.
fn run_line(page: &Page, run: &[usize], at: usize, offset: usize) -> String {
    let texts = |from: usize| -> String {
        run.iter()
            .skip(from)
            .filter_map(|&k| page.nodes[k].raw.t.as_deref())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let first = run.iter().position(|&k| k == at).unwrap_or(0);
    let before: usize = run[..first]
        .iter()
        .filter_map(|&k| page.nodes[k].raw.t.as_deref())
        .map(|t| t.chars().count() + 1)
        .sum();
    if before + offset + 40 <= TEXT_MAX {
        cut_text(&texts(0), TEXT_MAX)
    } else {
        cut_text(&texts(first), TEXT_MAX)
    }
}

/// Where two texts of a run meet, in a haystack.
const JOIN: char = '\u{0}';

/// A query as find matches it: lower case, runs of whitespace one space.
struct Needle(Vec<char>);

impl Needle {
    fn new(query: &str) -> Needle {
        Needle(normalized(query))
    }

    /// The first match in `hay` (normalized; [`JOIN`] between texts): its start. A space
    /// of the query matches a space or a join; a join matches nothing too.
    fn position(&self, hay: &[char]) -> Option<usize> {
        let q = &self.0;
        if q.is_empty() {
            return None;
        }
        (0..hay.len()).find(|&start| {
            if hay[start] == JOIN {
                return false;
            }
            let (mut i, mut j) = (start, 0);
            while j < q.len() {
                match hay.get(i) {
                    None => return false,
                    Some(&JOIN) => {
                        if q[j] == ' ' {
                            j += 1;
                        }
                        i += 1;
                    }
                    Some(c) if *c == q[j] => {
                        i += 1;
                        j += 1;
                    }
                    Some(_) => return false,
                }
            }
            true
        })
    }

    fn in_text(&self, text: &str) -> bool {
        self.position(&normalized(text)).is_some()
    }

    /// Does one node's own line match (role, name, value, placeholder, choices, states,
    /// tooltip, link)?
    fn in_node(&self, raw: &RawNode) -> bool {
        let fields = [
            raw.r.as_deref(),
            raw.n.as_deref(),
            raw.t.as_deref(),
            raw.v.as_deref(),
            raw.p.as_deref(),
            raw.u.as_deref(),
            raw.tt.as_deref(),
        ];
        fields.iter().flatten().any(|h| self.in_text(h))
            || raw.o.iter().any(|o| self.in_text(&o.t))
            || raw.f.iter().any(|f| f != "clickable" && self.in_text(f))
    }

    /// The first match in a run of texts: the text it starts in and where in that text.
    fn in_run(&self, page: &Page, run: &[usize]) -> Option<(usize, usize)> {
        let mut hay = Vec::new();
        let mut starts = Vec::with_capacity(run.len());
        for &k in run {
            if !hay.is_empty() {
                hay.push(JOIN);
            }
            starts.push(hay.len());
            hay.extend(normalized(
                page.nodes[k].raw.t.as_deref().unwrap_or_default(),
            ));
        }
        let at = self.position(&hay)?;
        let which = starts.iter().rposition(|&s| s <= at).unwrap_or(0);
        Some((run[which], at - starts[which]))
    }
}

/// `s` in lower case with each run of whitespace one space, trimmed ([`JOIN`] dropped: it
/// only marks where texts meet).
fn normalized(s: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        if c == JOIN {
            continue;
        }
        if c.is_whitespace() {
            if out.last().is_some_and(|l| *l != ' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    if out.last() == Some(&' ') {
        out.pop();
    }
    out
}
