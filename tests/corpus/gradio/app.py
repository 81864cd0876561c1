# A bakery-order app laid out with Gradio's own (Svelte) widgets: a radio, a checkbox, a
# dropdown with its custom listbox, a slider, a number field, tabs, a button, and a
# chat-like textbox with a send button. Every change a widget's listener sees is written to
# state.json in the working folder: the app's own state, which the corpus tests read (never
# the page). Usage: python app.py <port>
import json
import os
import sys
import time

import gradio as gr

STATE = os.path.join(os.getcwd(), "state.json")
SIZES = ["Small", "Medium", "Large"]
FLAVOURS = ["Chocolate", "Lemon", "Carrot", "Red velvet"]
KEYS = ["size", "gift_wrap", "flavour", "candles", "quantity", "name"]


def load():
    try:
        with open(STATE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"changes": [], "orders": [], "messages": []}


def save(state):
    # Whole file or nothing: a reader never sees half a write.
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, STATE)


def recorder(key):
    def changed(value):
        state = load()
        state["changes"].append({"key": key, "value": value, "at": time.time()})
        state.setdefault("form", {})[key] = value
        save(state)

    return changed


def place_order(*values):
    state = load()
    order = dict(zip(KEYS, values))
    state["orders"].append(order)
    state["form"] = order
    save(state)
    return f"Order {len(state['orders'])} placed: {order['quantity']} {order['flavour']} cake(s)"


def send(message, history):
    state = load()
    reply = f"The baker says: thanks, noted ({len(state['messages']) + 1})."
    state["messages"].append({"text": message, "reply": reply, "at": time.time()})
    save(state)
    history = (history or []) + [
        {"role": "user", "content": message},
        {"role": "assistant", "content": reply},
    ]
    return "", history


with gr.Blocks(title="Corpus Bakery") as demo:
    gr.Markdown("# Corpus Bakery")
    with gr.Tabs():
        with gr.Tab("Order"):
            size = gr.Radio(SIZES, label="Size", value="Small")
            gift = gr.Checkbox(label="Gift wrap", value=False)
            flavour = gr.Dropdown(FLAVOURS, label="Flavour", value="Chocolate")
            candles = gr.Slider(0, 10, value=0, step=1, label="Candles")
            quantity = gr.Number(label="Quantity", value=1, precision=0, minimum=1, maximum=20)
            name = gr.Textbox(label="Name for the order")
            place = gr.Button("Place order", variant="primary")
            placed = gr.Markdown()
            widgets = [size, gift, flavour, candles, quantity, name]
            # `.change` with its default trigger mode ("always_last"): a change made while
            # the last one is still on its way is recorded too (`.input` runs "once" and
            # drops it), and a textbox's value counts as typed.
            for key, widget in zip(KEYS, widgets):
                widget.change(recorder(key), inputs=widget, outputs=None)
            place.click(place_order, inputs=widgets, outputs=placed)
        with gr.Tab("Ask the baker"):
            chat = gr.Chatbot(label="Conversation")
            message = gr.Textbox(label="Message", placeholder="Ask the baker anything")
            send_button = gr.Button("Send")
            send_button.click(send, inputs=[message, chat], outputs=[message, chat])
            message.submit(send, inputs=[message, chat], outputs=[message, chat])

if __name__ == "__main__":
    demo.launch(server_name="127.0.0.1", server_port=int(sys.argv[1]))
