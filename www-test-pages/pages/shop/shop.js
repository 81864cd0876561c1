// Shared bits of the shop test pages: catalogue, localStorage state (keys `shop.*`) and the
// header. State: `shop.user` = email (absent = logged out), `shop.cart` = JSON array of
// {id, name, size, qty, price}, `shop.lastOrder` = JSON of the last placed order.
const PRODUCTS = {
  mug: { id: 'mug', name: 'Blue mug', price: 12 },
  scarf: { id: 'scarf', name: 'Red scarf', price: 25 },
  lamp: { id: 'lamp', name: 'Green lamp', price: 40 },
};
const shop = {
  user: () => localStorage.getItem('shop.user'),
  cart: () => JSON.parse(localStorage.getItem('shop.cart') || '[]'),
  saveCart: (lines) => localStorage.setItem('shop.cart', JSON.stringify(lines)),
  count: (lines) => (lines || shop.cart()).reduce((n, l) => n + l.qty, 0),
  total: (lines) => (lines || shop.cart()).reduce((t, l) => t + l.qty * l.price, 0),
  money: (n) => n.toFixed(2),
  el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    e.append(...kids);
    return e;
  },
  // Fills <header id="shop-header">: shop link, "Cart (<n>)" (n = sum of quantities), and
  // "Signed in as <email>" + "Log out", or a "Sign in" link.
  renderHeader() {
    const h = document.getElementById('shop-header');
    if (!h) return;
    const el = shop.el;
    const user = shop.user();
    const nav = el('nav', { 'aria-label': 'Shop' },
      el('a', { href: 'index.html', id: 'home' }, 'Shop'), ' ',
      el('a', { href: 'cart.html', id: 'cart-link' }, `Cart (${shop.count()})`), ' ');
    if (user) {
      const out = el('button', { id: 'logout', type: 'button' }, 'Log out');
      out.addEventListener('click', () => { localStorage.removeItem('shop.user'); location.reload(); });
      nav.append(el('span', { id: 'user' }, `Signed in as ${user}`), ' ', out);
    } else {
      nav.append(el('a', { href: 'login.html', id: 'signin' }, 'Sign in'));
    }
    h.replaceChildren(nav);
  },
};
shop.renderHeader();
window.addEventListener('storage', () => shop.renderHeader());
