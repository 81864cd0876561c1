# A garden-order app laid out with Panel's own widgets (Bokeh models in shadow roots): a
# select, a radio group, a checkbox, an integer slider, a text input, a button, and a Bokeh
# scatter plot (drawn on a canvas) whose points are picked with a tap. Every change a
# widget's watcher sees is written to state.json in the working folder: the app's own state,
# which the corpus tests read (never the page).
import json
import os
import time

import panel as pn
from bokeh.models import ColumnDataSource, TapTool
from bokeh.plotting import figure

STATE = os.path.join(os.getcwd(), "state.json")
PLANTS = ["Tomato", "Basil", "Mint", "Lavender"]
POTS = ["Clay", "Plastic", "Ceramic"]
# The garden's beds: one drawn red (the sunny one), the others grey.
BEDS = {
    "name": ["North bed", "East bed", "Sunny bed", "West bed", "Shade bed"],
    "x": [1, 4, 7, 2, 5],
    "y": [7, 8, 3, 2, 5],
    "color": ["#9e9e9e", "#9e9e9e", "#e00000", "#9e9e9e", "#9e9e9e"],
}


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


def app():
    plant = pn.widgets.Select(name="Plant", options=PLANTS, value=PLANTS[0])
    pot = pn.widgets.RadioBoxGroup(name="Pot", options=POTS, value=POTS[0], inline=True)
    gift = pn.widgets.Checkbox(name="Gift wrap", value=False)
    count = pn.widgets.IntSlider(name="Count", start=1, end=10, value=1)
    note = pn.widgets.TextInput(name="Note for the gardener", placeholder="Anything we should know?")
    submit = pn.widgets.Button(name="Submit order", button_type="primary")
    status = pn.pane.Markdown("No order yet.")

    source = ColumnDataSource(data=BEDS)
    plot = figure(
        title="Garden beds (tap one to plant there)",
        width=480,
        height=320,
        x_range=(0, 8),
        y_range=(0, 9),
        tools="tap",
        toolbar_location=None,
    )
    plot.scatter("x", "y", size=26, color="color", source=source)
    plot.select_one(TapTool).mode = "replace"

    def form():
        indices = source.selected.indices
        return {
            "plant": plant.value,
            "pot": pot.value,
            "gift_wrap": gift.value,
            "count": count.value,
            "note": note.value,
            "bed": BEDS["name"][indices[0]] if indices else None,
        }

    def changed(event):
        state = load()
        key = getattr(event.obj, "name", "") or event.name
        value = event.new
        state["changes"].append({"key": key, "value": value, "at": time.time()})
        state["form"] = form()
        save(state)

    for w in (plant, pot, gift, count, note):
        w.param.watch(changed, "value")
    source.selected.on_change("indices", lambda attr, old, new: changed(
        type("Event", (), {"obj": None, "name": "bed", "new": new})()))

    def place(_):
        state = load()
        order = form()
        state["orders"].append(order)
        state["form"] = order
        save(state)
        status.object = f"Order {len(state['orders'])} submitted."

    submit.on_click(place)
    # The plot beside the form: in view with it in a 1280x720 window.
    return pn.Column(
        "# Corpus Garden",
        pn.Row(
            pn.Column(plant, pn.pane.Markdown("**Pot**"), pot, gift, count, note, submit, status),
            plot,
        ),
    )


app().servable(title="Corpus Garden")
