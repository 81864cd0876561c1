//! Property-based fuzz target: the page model (`snapshot`): walker output → `Page` (child
//! frames under their iframes) → text with refs, cut to a character budget; `find`, `diff`.

mod fuzz_common;

use std::collections::{HashMap, HashSet};

use ext_core::snapshot::{
    diff, find, render, Choice, FrameKey, Page, RawNode, RefTable, RenderOptions, Walk,
};
use fuzz_common::{any_string, fuzz};
use proptest::prelude::*;

const REGRESSIONS: &str = "tests/proptest-regressions/fuzz_snapshot.txt";

/// The smallest budget a snapshot gets (`cdp::SNAPSHOT_MIN_CHARS`).
const MIN_BUDGET: usize = ext_core::cdp::SNAPSHOT_MIN_CHARS;

fn role() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        6 => prop::sample::select(vec![
            "button", "link", "textbox", "checkbox", "combobox", "listbox", "option", "tab",
            "iframe", "list", "listitem", "table", "row", "cell", "columnheader", "rowheader",
            "gridcell", "grid", "menu", "menuitem", "tree", "treeitem", "heading", "group",
            "figure", "label", "generic", "img", "separator", "paragraph", "form", "dialog",
            "main", "navigation", "region", "feed", "rowgroup", "tablist", "slider",
        ]).prop_map(str::to_string),
        1 => any_string(),
    ])
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => any_string(),
        1 => (prop::sample::select(vec!["a", "é", "語", "🦀", "\u{301}", "\"", "\\", "\n", " "]), 250..1500usize)
            .prop_map(|(s, n)| s.repeat(n)),
    ]
}

fn flags() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(vec![
                "clickable", "hidden", "offscreen", "checked", "disabled", "expanded", "focused",
                "required", "selected",
            ]).prop_map(str::to_string),
            1 => any_string(),
        ],
        0..3,
    )
}

/// One walker node at depth `d`; `ids` bounds registry ids so some repeat (as across frames).
fn raw_node(ids: u32) -> impl Strategy<Value = RawNode> {
    let named = (
        role(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(any_string()),
    );
    let rest = (
        prop::option::of(0..ids),
        prop::option::of(any_string()),
        flags(),
        prop::option::of(any::<u8>()),
        prop::collection::vec(any_string(), 0..4),
        any::<bool>(),
    );
    (named, rest).prop_map(|((r, n, t, v, p), (i, u, f, l, o, is_text))| {
        if is_text {
            // Text nodes carry their text, and (browser_find's walk) the element holding it.
            RawNode {
                t: Some(t.unwrap_or_else(|| "x".into())),
                e: i,
                ..RawNode::default()
            }
        } else {
            RawNode {
                d: 0,
                r,
                n,
                t: None,
                g: None,
                v,
                p,
                i,
                e: None,
                u,
                f,
                l,
                o: o.into_iter()
                    .map(|t| Choice {
                        t,
                        ..Choice::default()
                    })
                    .collect(),
                on: None,
                // Some elements in view, for viewport-only renders.
                vp: i.filter(|id| id % 2 == 0).map(|_| 1),
                tt: None,
                withheld: None,
                remote: None,
            }
        }
    })
}

/// A pre-order walk: depths either as the walker makes them (each at most one deeper than
/// the one before) or arbitrary (a malformed walk must not break the builder either).
fn walk(max_nodes: usize) -> impl Strategy<Value = Walk> {
    let nodes = prop::collection::vec((raw_node(64), 0u32..3, any::<u32>()), 0..max_nodes);
    (
        nodes,
        any::<bool>(),
        any::<bool>(),
        text(),
        any_string(),
        0..10u8,
    )
        .prop_map(|(nodes, well_formed, truncated, title, url, shape)| {
            let mut d = 0u32;
            let nodes = nodes
                .into_iter()
                .map(|(mut n, step, wild)| {
                    n.d = if well_formed {
                        // 0: up some levels, 1: sibling, 2: child.
                        d = match step {
                            0 => d / 2,
                            1 => d,
                            _ => d + 1,
                        };
                        d
                    } else if shape == 0 {
                        wild
                    } else {
                        wild % 8
                    };
                    n
                })
                .collect();
            Walk {
                nodes,
                truncated,
                title,
                url,
            }
        })
}

/// A page: a main-frame walk and child frames under some of its iframes.
fn page() -> impl Strategy<Value = Page> {
    (walk(40), prop::collection::vec(walk(20), 0..3)).prop_map(|(main, children)| {
        let key = |f: usize| FrameKey {
            frame_id: format!("F{f}"),
            loader_id: format!("L{f}"),
        };
        let mut page = Page::from_walk(main, key(0));
        let mut frame = 0;
        for (n, child) in children.into_iter().enumerate() {
            let iframes = page.iframes(frame);
            let holder = iframes
                .get(n % iframes.len().max(1))
                .map(|(i, _)| *i)
                .or_else(|| (!page.nodes.is_empty()).then(|| n % page.nodes.len()));
            if let Some(holder) = holder {
                page.attach_frame(holder, child, key(n + 1));
                frame = page.frames.len() - 1;
            }
        }
        page
    })
}

fn options() -> impl Strategy<Value = (RenderOptions, Option<prop::sample::Index>)> {
    (
        prop_oneof![
            2 => MIN_BUDGET..2_000usize,
            1 => 2_000..30_000usize,
        ],
        prop::option::of(0u32..5),
        any::<bool>(),
        prop_oneof![3 => Just(0usize), 1 => 0..60usize],
        prop::option::of(any::<prop::sample::Index>()),
        (1..50usize, 1..50usize),
    )
        .prop_map(
            |(max_chars, depth, interactive_only, offset, root, (fold_at, fold_keep))| {
                (
                    RenderOptions {
                        max_chars,
                        depth,
                        interactive_only,
                        // Derived from the other draws: viewport-only lists, paged.
                        viewport_only: interactive_only && offset % 2 == 1,
                        max_items: depth.map(|d| d as usize + 1),
                        offset,
                        fold_at,
                        fold_keep: fold_keep.min(fold_at),
                    },
                    root,
                )
            },
        )
}

fn refs_in(text: &str) -> Vec<String> {
    text.match_indices("[ref=")
        .filter_map(|(at, _)| {
            let rest = &text[at + 5..];
            rest.find(']').map(|end| rest[..end].to_string())
        })
        .collect()
}

fn table() -> RefTable {
    let mut t = RefTable::new();
    t.set_main_frame("F0");
    t
}

/// The budget holds, cuts are marked, and every ref names one element of the page.
fn check_render(
    page: &Page,
    opts: &RenderOptions,
    root: Option<usize>,
) -> Result<(), TestCaseError> {
    let mut refs = table();
    let out = render(page, root, &mut refs, opts);
    let chars = out.text.chars().count();
    prop_assert!(
        chars <= opts.max_chars,
        "{} chars for a budget of {}:\n{}",
        chars,
        opts.max_chars,
        out.text
    );
    if out.cut {
        // Cut by the budget, or a list paged by its item count (`max`).
        let paged =
            out.text.contains(" elements from ") && out.text.contains("More: browser_snapshot");
        prop_assert!(
            out.text.contains("… cut at the") || paged,
            "cut without a marker:\n{}",
            out.text
        );
    }
    // The body lines are the text after its header.
    let body = format!("\n{}", out.lines.join("\n"));
    prop_assert!(out.lines.is_empty() || out.text.ends_with(&body));
    // Refs: each names one element that is on the page, and one element has one ref.
    let elements: HashSet<(FrameKey, u32)> = page
        .nodes
        .iter()
        .filter_map(|n| Some((page.frames[n.frame].clone(), n.raw.i?)))
        .collect();
    let mut by_element: HashMap<(FrameKey, u32), String> = HashMap::new();
    for r in refs_in(&out.text) {
        // A page's own text never spells a ref (`[ref=` in it is broken): every ref in the
        // text is one Kapture handed out.
        let resolved = refs.resolve(&r, |f| {
            page.frames
                .iter()
                .find(|k| k.frame_id == f)
                .map(|k| k.loader_id.clone())
        });
        prop_assert!(
            resolved.is_ok(),
            "{} is no ref of Kapture's:\n{}",
            r,
            out.text
        );
        let Ok(target) = resolved else { continue };
        let element = (target.frame, target.local);
        prop_assert!(elements.contains(&element), "{} names no element", r);
        let first = by_element.entry(element).or_insert_with(|| r.clone());
        prop_assert_eq!(&*first, &r, "one element, two refs");
    }
    // No page string starts a line, or reads as one of Kapture's.
    for line in out.text.lines() {
        let bare = line.trim_start();
        prop_assert!(
            !bare.starts_with("Hint:")
                && !bare.starts_with("Error ")
                && !line.chars().any(ext_core::escape::is_unsafe),
            "a page string made the line {:?}",
            line
        );
    }
    prop_assert_eq!(out.text.lines().count(), out.lines.len() + 1);
    // Rendering again hands out the same refs.
    let again = render(page, root, &mut refs, opts);
    prop_assert_eq!(&again.text, &out.text);
    Ok(())
}

#[test]
fn rendering_keeps_to_the_budget_marks_cuts_and_refs_are_unique() {
    fuzz(
        REGRESSIONS,
        "rendering_keeps_to_the_budget_marks_cuts_and_refs_are_unique",
        (page(), options()),
        |(page, (opts, root))| {
            let root =
                root.and_then(|i| (!page.nodes.is_empty()).then(|| i.index(page.nodes.len())));
            check_render(&page, &opts, None)?;
            check_render(&page, &opts, root)?;
            Ok(())
        },
    );
}

#[test]
fn find_and_diff_never_panic_and_stay_consistent() {
    fuzz(
        REGRESSIONS,
        "find_and_diff_never_panic_and_stay_consistent",
        (page(), page(), text(), 1..50usize),
        |(a, b, query, max)| {
            let mut refs = table();
            let (lines, total) = find(&a, &mut refs, &query, max);
            prop_assert!(lines.len() <= max && lines.len() <= total);
            let opts = RenderOptions::default();
            let old = render(&a, None, &mut refs, &opts).lines;
            let new = render(&b, None, &mut refs, &opts).lines;
            prop_assert!(diff(&old, &old).is_empty());
            let changes = diff(&old, &new);
            let removed = changes.iter().filter(|l| l.starts_with("- ")).count();
            let added = changes.iter().filter(|l| l.starts_with("+ ")).count();
            prop_assert_eq!(removed + added, changes.len());
            // What is not reported is a common prefix and suffix of both.
            prop_assert_eq!(old.len() - removed, new.len() - added);
            Ok(())
        },
    );
}

/// Deep pages (a walk of 30,000 nodes can nest thousands of levels) render without
/// exhausting the stack, within the budget.
#[test]
fn deep_pages_render_within_the_budget() {
    let chain = (
        prop::sample::select(vec![
            None,
            Some("group"),
            Some("generic"),
            Some("listitem"),
            Some("button"),
        ]),
        200..1_000usize,
        MIN_BUDGET..30_000usize,
        any::<bool>(),
    );
    fuzz(
        REGRESSIONS,
        "deep_pages_render_within_the_budget",
        chain,
        |(role, depth, max_chars, interactive_only)| {
            let nodes = (0..depth)
                .map(|d| RawNode {
                    d: d as u32,
                    r: role.map(str::to_string),
                    i: Some(d as u32 + 1),
                    ..RawNode::default()
                })
                .chain(std::iter::once(RawNode {
                    d: depth as u32,
                    t: Some("bottom".into()),
                    ..RawNode::default()
                }))
                .collect();
            let walk = Walk {
                nodes,
                title: "deep".into(),
                url: "http://127.0.0.1/deep".into(),
                truncated: false,
            };
            let page = Page::from_walk(
                walk,
                FrameKey {
                    frame_id: "F0".into(),
                    loader_id: "L0".into(),
                },
            );
            let opts = RenderOptions {
                max_chars,
                interactive_only,
                ..RenderOptions::default()
            };
            check_render(&page, &opts, None)?;
            let mut refs = table();
            let _ = find(&page, &mut refs, "bottom", 5);
            Ok(())
        },
    );
}

/// Wide pages: long lists fold and say how to get the rest.
#[test]
fn wide_pages_fold_and_stay_reachable() {
    fuzz(
        REGRESSIONS,
        "wide_pages_fold_and_stay_reachable",
        (
            prop::sample::select(vec!["list", "table", "menu", "main"]),
            41..600usize,
            MIN_BUDGET..30_000usize,
        ),
        |(container, items, max_chars)| {
            let item = if container == "table" {
                "row"
            } else {
                "listitem"
            };
            let mut nodes = vec![RawNode {
                d: 0,
                r: Some(container.into()),
                i: Some(1),
                ..RawNode::default()
            }];
            for k in 0..items {
                nodes.push(RawNode {
                    d: 1,
                    r: Some(item.into()),
                    n: Some(format!("item {k}")),
                    i: Some(k as u32 + 2),
                    ..RawNode::default()
                });
            }
            let page = Page::from_walk(
                Walk {
                    nodes,
                    ..Walk::default()
                },
                FrameKey {
                    frame_id: "F0".into(),
                    loader_id: "L0".into(),
                },
            );
            let opts = RenderOptions {
                max_chars,
                ..RenderOptions::default()
            };
            check_render(&page, &opts, None)?;
            check_render(&page, &opts, Some(0))?;
            let out = render(&page, Some(0), &mut table(), &opts);
            // Either everything is there, or a marker says how to page on.
            prop_assert!(
                out.text.contains(&format!("item {}", items - 1))
                    || out.text.contains("more ")
                    || out.text.contains("… cut at the"),
                "{}",
                out.text
            );
            Ok(())
        },
    );
}
