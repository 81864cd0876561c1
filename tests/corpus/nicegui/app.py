# A tea-order app laid out with NiceGUI's own (Vue/Quasar) widgets: a radio, a checkbox, a
# select with its popup menu, a slider, a number and a text input, a confirmation dialog,
# and a second page reached by client-side routing (ui.sub_pages) where feedback is sent.
# Every change a widget's handler sees is written to state.json in the working folder: the
# app's own state, which the corpus tests read (never the page). Usage: python app.py <port>
import json
import os
import sys
import time

from nicegui import ui

STATE = os.path.join(os.getcwd(), "state.json")
SIZES = ["Small", "Medium", "Large"]
TEAS = ["Green", "Black", "Oolong", "Chamomile"]


def load():
    try:
        with open(STATE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"changes": [], "orders": [], "feedback": []}


def save(state):
    # Whole file or nothing: a reader never sees half a write.
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, STATE)


def record(form, key, value):
    form[key] = value
    state = load()
    state["changes"].append({"key": key, "value": value, "at": time.time()})
    state["form"] = dict(form)
    save(state)


def order_page():
    form = {"size": "Small", "honey": False, "tea": "Green", "strength": 3, "cups": 1, "name": ""}

    def on(key):
        return lambda e: record(form, key, e.value)

    ui.label("Order").classes("text-h5")
    ui.label("Size")
    ui.radio(SIZES, value="Small", on_change=on("size")).props("inline")
    ui.checkbox("Extra honey", on_change=on("honey"))
    ui.select(TEAS, label="Tea", value="Green", on_change=on("tea")).classes("w-64")
    ui.label("Strength")
    ui.slider(min=1, max=5, step=1, value=3, on_change=on("strength")).props("label").classes("w-64")
    ui.number("Cups", value=1, min=1, max=20, precision=0, on_change=on("cups")).classes("w-64")
    ui.input("Name for the order", on_change=on("name")).classes("w-64")

    placed = ui.label()

    def confirm():
        state = load()
        order = dict(form)
        state["orders"].append(order)
        state["form"] = order
        save(state)
        dialog.close()
        placed.set_text(f"Order {len(state['orders'])} placed")

    with ui.dialog() as dialog, ui.card():
        ui.label("Place this order?")
        with ui.row():
            ui.button("Cancel", on_click=dialog.close).props("flat")
            ui.button("Confirm", on_click=confirm)
    ui.button("Place order", on_click=dialog.open)


def feedback_page():
    form = {"rating": None, "comment": "", "contact": False}

    ui.label("Feedback").classes("text-h5")
    ui.label("How was your tea?")
    rating = ui.radio(["Poor", "Fine", "Great"], on_change=lambda e: form.update(rating=e.value))
    rating.props("inline")
    ui.textarea("Comment", on_change=lambda e: form.update(comment=e.value)).classes("w-96")
    ui.switch("Contact me", on_change=lambda e: form.update(contact=e.value))
    sent = ui.label()

    def send():
        state = load()
        state["feedback"].append(dict(form, at=time.time()))
        save(state)
        sent.set_text("Thank you for your feedback")

    ui.button("Send feedback", on_click=send)


def root():
    with ui.header():
        ui.label("Corpus Tea House").classes("text-h6")
        ui.link("Order", "/").classes("text-white")
        ui.link("Feedback", "/feedback").classes("text-white")
    ui.sub_pages({"/": order_page, "/feedback": feedback_page})


if __name__ in {"__main__", "__mp_main__"}:
    ui.run(
        root,
        title="Corpus Tea House",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        reload=False,
        show=False,
        show_welcome_message=False,
    )
