//! A panel page's port to the service worker that outlives the worker: MV3 stops an idle
//! worker (and a crash or an update ends one), which disconnects every port to it. A
//! `Link` notices (`onDisconnect`), tells its page (which shows "reconnecting" and takes
//! no clicks), opens a new port after a capped backoff (opening one wakes the worker), and
//! tells its page again once the worker speaks on it — the worker's first word on every
//! port — so the page sends its `Watch`/`Subscribe` again.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::backoff::Backoff;
use crate::chrome::port::{Listener, Port};

/// What a page does with its link's news: every message, the worker listening on a (new)
/// port, and the port gone.
type OnMessage = Rc<dyn Fn(JsValue)>;
type OnChange = Rc<dyn Fn()>;

/// First and longest wait before opening the port again.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_CAP: Duration = Duration::from_secs(3);

pub struct Link {
    name: &'static str,
    port: RefCell<Option<Port>>,
    /// Which port is current: a late event of an earlier one is ignored.
    generation: Cell<u64>,
    /// The worker spoke on the current port.
    heard: Cell<bool>,
    backoff: RefCell<Backoff>,
    /// The current port's listeners (dropped with it).
    listeners: RefCell<Vec<Listener>>,
    on_message: RefCell<Option<OnMessage>>,
    on_up: RefCell<Option<OnChange>>,
    on_down: RefCell<Option<OnChange>>,
}

impl Link {
    /// Open a link on the port `name`. Handlers are set next (`on_message`, `on_up`,
    /// `on_down`); nothing arrives before the page's code returns to the event loop.
    pub fn open(name: &'static str) -> Rc<Link> {
        let link = Rc::new(Link {
            name,
            port: RefCell::default(),
            generation: Cell::new(0),
            heard: Cell::new(false),
            backoff: RefCell::new(Backoff::new(RETRY_FIRST, RETRY_CAP)),
            listeners: RefCell::default(),
            on_message: RefCell::default(),
            on_up: RefCell::default(),
            on_down: RefCell::default(),
        });
        link.connect();
        link
    }

    pub fn on_message(&self, f: impl Fn(JsValue) + 'static) {
        *self.on_message.borrow_mut() = Some(Rc::new(f));
    }

    /// Called each time the worker speaks first on a port: at the start, and after every
    /// reconnection.
    pub fn on_up(&self, f: impl Fn() + 'static) {
        *self.on_up.borrow_mut() = Some(Rc::new(f));
    }

    /// Called each time the port goes away.
    pub fn on_down(&self, f: impl Fn() + 'static) {
        *self.on_down.borrow_mut() = Some(Rc::new(f));
    }

    /// Whether the worker listens on the current port.
    pub fn is_up(&self) -> bool {
        self.heard.get()
    }

    /// Send a message; false when there is no open port (the message is dropped: the page
    /// takes no clicks while it reconnects, and sends its state again once up).
    pub fn post<T: Serialize>(&self, message: &T) -> bool {
        match &*self.port.borrow() {
            Some(port) => port.post(message),
            None => false,
        }
    }

    fn connect(self: &Rc<Self>) {
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        self.heard.set(false);
        let Some(port) = Port::open(self.name) else {
            // The extension itself is gone from under this page: try again later (a reload
            // gives the page a dead context, and the retries stay capped).
            self.retry();
            return;
        };
        let weak = Rc::downgrade(self);
        let on_message = port.listen_messages(move |msg| {
            let Some(link) = current(&weak, generation) else {
                return;
            };
            if !link.heard.replace(true) {
                link.backoff.borrow_mut().reset();
                let up = link.on_up.borrow().clone();
                if let Some(up) = up {
                    up();
                }
            }
            let f = link.on_message.borrow().clone();
            if let Some(f) = f {
                f(msg);
            }
        });
        let weak = Rc::downgrade(self);
        let on_disconnect = port.listen_disconnect(move |_| {
            let Some(link) = current(&weak, generation) else {
                return;
            };
            link.port.borrow_mut().take();
            link.heard.set(false);
            let down = link.on_down.borrow().clone();
            if let Some(down) = down {
                down();
            }
            link.retry();
        });
        // The old port's listeners go: it is closed and tells nothing more.
        *self.listeners.borrow_mut() = vec![on_message, on_disconnect];
        *self.port.borrow_mut() = Some(port);
    }

    fn retry(self: &Rc<Self>) {
        let delay = self.backoff.borrow_mut().next_delay(js_sys::Math::random());
        let weak = Rc::downgrade(self);
        spawn_local(async move {
            crate::platform::sleep(delay).await;
            if let Some(link) = weak.upgrade() {
                if link.port.borrow().is_none() {
                    link.connect();
                }
            }
        });
    }
}

/// The link, if `generation` is still its current port.
fn current(weak: &Weak<Link>, generation: u64) -> Option<Rc<Link>> {
    weak.upgrade().filter(|l| l.generation.get() == generation)
}
