//! The agent's page model: turns what the page walker observed (roles, names, values,
//! states) into a compact indented text tree with refs, folding repeated items and cutting
//! to a character budget with honest markers that say how to get the rest. Pure Rust:
//! recorded walker output is enough to test every rule.

mod find;
mod refs;
mod render;

pub use find::{find, find_shown};
pub use refs::{RefTable, RefTarget};
pub use render::{diff, diff_text, render, RenderOptions, Rendered, ShownRef, ACTIONABLE};

use serde::Deserialize;

/// One node as the walker reports it (short keys keep the transfer small).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RawNode {
    /// Depth below the walk's root.
    pub d: u32,
    /// Role; absent for text.
    #[serde(default)]
    pub r: Option<String>,
    /// Accessible name.
    #[serde(default)]
    pub n: Option<String>,
    /// Text of a text node.
    #[serde(default)]
    pub t: Option<String>,
    /// The text node is drawn touching the text before it (no space between them on
    /// screen or in the markup): joined without one.
    #[serde(default)]
    pub g: Option<u8>,
    /// Value (inputs, selects).
    #[serde(default)]
    pub v: Option<String>,
    /// Placeholder, when there is no value.
    #[serde(default)]
    pub p: Option<String>,
    /// The tooltip inside a nameless link or button (an icon's `title`): shown beside it,
    /// not as its name (Chrome names such an element nothing).
    #[serde(default)]
    pub tt: Option<String>,
    /// Registry id in the frame's isolated world.
    #[serde(default)]
    pub i: Option<u32>,
    /// Of a text (browser_find's walk only): registry id of the element holding it, when
    /// that element is not a node of the model (a code editor's token span).
    #[serde(default)]
    pub e: Option<u32>,
    /// Link target or frame source.
    #[serde(default)]
    pub u: Option<String>,
    /// States and flags: checked, disabled, hidden, offscreen…
    #[serde(default)]
    pub f: Vec<String>,
    /// Heading level.
    #[serde(default)]
    pub l: Option<u8>,
    /// Choices of a select (the first ones, up to the walker's cap).
    #[serde(default)]
    pub o: Vec<Choice>,
    /// How many choices the select has, when more than `o` holds.
    #[serde(default)]
    pub on: Option<u32>,
    /// The element's box meets its frame's viewport (told only by a walk asked for it).
    #[serde(default)]
    pub vp: Option<u8>,
    /// Set by Kapture, never read from a walk: this node stands for a frame whose content
    /// is withheld, for this reason (the rule that denies reading its origin).
    #[serde(skip)]
    pub withheld: Option<String>,
    /// Set by Kapture, never read from a walk: this node stands for a frame Chrome runs in
    /// another process whose content was not read, with that frame's origin.
    #[serde(skip)]
    pub remote: Option<String>,
}

/// One choice of a select.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Choice {
    /// Its label.
    pub t: String,
    /// Disabled.
    #[serde(default)]
    pub d: bool,
    /// Selected (told only for a select of many choices; one choice is the select's value).
    #[serde(default)]
    pub s: bool,
}

/// What one walk of one frame returned.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Walk {
    pub nodes: Vec<RawNode>,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub url: String,
}

/// A node of the page tree, with the frame it lives in.
#[derive(Debug, Clone)]
pub struct Node {
    pub raw: RawNode,
    /// Index into [`Page::frames`].
    pub frame: usize,
    pub children: Vec<usize>,
    pub parent: Option<usize>,
}

/// A frame whose nodes are in the tree: the key its refs are scoped to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FrameKey {
    pub frame_id: String,
    pub loader_id: String,
}

/// The whole observed page: nodes of every frame, iframes' documents under their iframe.
#[derive(Debug, Clone, Default)]
pub struct Page {
    pub nodes: Vec<Node>,
    /// Top-level nodes (children of the walk's root).
    pub roots: Vec<usize>,
    pub frames: Vec<FrameKey>,
    pub title: String,
    pub url: String,
    pub truncated: bool,
}

impl Page {
    /// Build the tree of one frame's walk.
    pub fn from_walk(walk: Walk, frame: FrameKey) -> Page {
        let mut page = Page {
            frames: vec![frame],
            title: walk.title,
            url: walk.url,
            truncated: walk.truncated,
            ..Page::default()
        };
        let roots = page.append(walk.nodes, 0, None);
        page.roots = roots;
        page
    }

    /// Append pre-order nodes (depths relative to 0) under `parent`; returns the new top-level ids.
    fn append(&mut self, raw: Vec<RawNode>, frame: usize, parent: Option<usize>) -> Vec<usize> {
        let mut top = Vec::new();
        // stack of (depth, node index)
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for node in raw {
            while stack.last().is_some_and(|(d, _)| *d >= node.d) {
                stack.pop();
            }
            let idx = self.nodes.len();
            let up = stack.last().map(|(_, i)| *i).or(parent);
            let depth = node.d;
            self.nodes.push(Node {
                raw: node,
                frame,
                children: Vec::new(),
                parent: up,
            });
            match stack.last() {
                Some((_, p)) => self.nodes[*p].children.push(idx),
                None => match parent {
                    Some(p) => self.nodes[p].children.push(idx),
                    None => top.push(idx),
                },
            }
            stack.push((depth, idx));
        }
        top
    }

    /// Put a child frame's walk under the iframe node that holds it.
    pub fn attach_frame(&mut self, iframe_node: usize, walk: Walk, frame: FrameKey) {
        let frame_idx = self.frames.len();
        self.frames.push(frame);
        self.truncated |= walk.truncated;
        self.append(walk.nodes, frame_idx, Some(iframe_node));
    }

    /// The node with registry id `local` in frame `frame`.
    pub fn node_by_local(&self, frame: usize, local: u32) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.frame == frame && n.raw.i == Some(local))
    }

    /// Iframe nodes of frame `frame` with their registry ids.
    pub fn iframes(&self, frame: usize) -> Vec<(usize, u32)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.frame == frame && n.raw.r.as_deref() == Some("iframe"))
            .filter_map(|(i, n)| n.raw.i.map(|l| (i, l)))
            .collect()
    }
}

#[cfg(test)]
mod tests;
