# A coffee-order app laid out with Streamlit's own widgets (Base Web): a radio, a checkbox,
# a select, a multiselect, a slider, a number input, tabs, a button, and an HTML component
# (an iframe). Every change a widget's callback sees is written to state.json in the working
# folder: the app's own state, which the corpus tests read (never the page).
import json
import os
import time

import streamlit as st
import streamlit.components.v1 as components

STATE = os.path.join(os.getcwd(), "state.json")
SIZES = ["Small", "Medium", "Large"]
MILKS = ["Whole", "Oat", "Almond", "No milk"]
TOPPINGS = ["Cinnamon", "Cocoa", "Vanilla", "Caramel"]
DRINKS = ["Latte", "Flat white", "Cortado", "Mocha"]
# The special is shown only inside the component's iframe: an agent must read it there.
SPECIAL = "Cortado"


def load():
    try:
        with open(STATE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"changes": [], "orders": []}


def save(state):
    # Whole file or nothing: a reader never sees half a write.
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, STATE)


def current():
    return {
        "drink": st.session_state.get("drink"),
        "size": st.session_state.get("size"),
        "extra_shot": st.session_state.get("extra_shot"),
        "milk": st.session_state.get("milk"),
        "toppings": st.session_state.get("toppings"),
        "sweetness": st.session_state.get("sweetness"),
        "quantity": st.session_state.get("quantity"),
        "name": st.session_state.get("name"),
    }


def changed(key):
    state = load()
    state["changes"].append({"key": key, "value": st.session_state.get(key), "at": time.time()})
    state["form"] = current()
    save(state)


def place_order():
    state = load()
    order = current()
    state["orders"].append(order)
    state["form"] = order
    save(state)
    st.session_state["placed"] = len(state["orders"])


st.set_page_config(page_title="Corpus Coffee", layout="centered")
st.title("Corpus Coffee")

order_tab, specials_tab = st.tabs(["Order", "Today's special"])

with order_tab:
    st.selectbox("Drink", DRINKS, key="drink", on_change=changed, args=("drink",))
    st.radio("Size", SIZES, key="size", horizontal=True, on_change=changed, args=("size",))
    st.checkbox("Extra shot", key="extra_shot", on_change=changed, args=("extra_shot",))
    st.selectbox("Milk", MILKS, key="milk", on_change=changed, args=("milk",))
    st.multiselect("Toppings", TOPPINGS, key="toppings", on_change=changed, args=("toppings",))
    st.slider("Sweetness", 0, 10, 5, key="sweetness", on_change=changed, args=("sweetness",))
    st.number_input("Quantity", 1, 20, 1, key="quantity", on_change=changed, args=("quantity",))
    st.text_input("Name for the order", key="name", on_change=changed, args=("name",))
    st.button("Place order", on_click=place_order)
    if st.session_state.get("placed"):
        st.success(f"Order {st.session_state['placed']} placed")

with specials_tab:
    st.write("The barista's pick, straight from the board:")
    components.html(
        f"""<div style="font-family: sans-serif">
  <h2>Today's special</h2>
  <p id="special">{SPECIAL}</p>
  <p>Ask for it in the Order tab.</p>
</div>""",
        height=160,
    )
