// Building the page: every value from chatd goes in as text (a text node, `textContent` or an
// attribute), never as HTML, so a user named `<img src=x onerror=…>` shows as those characters.

/** An element with attributes (`on…` functions become listeners) and children (strings become text). */
export function el(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
        if (value === undefined || value === null || value === false) continue;
        if (typeof value === "function") node.addEventListener(name.slice(2), value);
        else node.setAttribute(name, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
}

function append(node, children) {
    for (const child of children.flat()) {
        if (child === undefined || child === null || child === false) continue;
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
}

export const $ = (selector) => document.querySelector(selector);

/** Replaces a node's children. */
export function fill(node, ...children) {
    node.replaceChildren();
    append(node, children);
}

/** A `<dl>`'s terms and definitions from pairs. */
export function facts(list, pairs) {
    fill(list, pairs.flatMap(([term, value]) => [el("dt", {}, term), el("dd", {}, value ?? "—")]));
}

/** A short message for the operator (`role=status`); errors stay until the next one. */
export function say(message, isError = false) {
    const toast = $("#toast");
    const line = el("p", { class: isError ? "error" : undefined }, message);
    toast.replaceChildren(line);
    if (!isError) setTimeout(() => line.remove(), 5000);
}

/** Runs an action, saying its error instead of throwing; answers whether it succeeded. */
export async function attempt(action) {
    try {
        await action();
        return true;
    } catch (error) {
        say(error.message, true);
        return false;
    }
}

/** Epoch milliseconds as local date and time. */
export const time = (milliseconds) => (milliseconds ? new Date(milliseconds).toLocaleString() : "—");

/**
 * A paged list: `load(cursor)` answers `{items, next}`, `row(item)` an element; `more` is
 * the button that loads the next page.
 */
export function pager(body, more, load, row) {
    let next = null;
    let generation = 0; // a reload makes the answers of earlier loads stale
    async function page(cursor) {
        const mine = cursor ? generation : ++generation;
        more.disabled = true;
        try {
            const answer = await load(cursor);
            if (mine !== generation) return;
            if (!cursor) body.replaceChildren();
            for (const item of answer.items) body.append(row(item));
            next = answer.next ?? null;
            more.hidden = next === null;
        } finally {
            if (mine === generation) more.disabled = false;
        }
    }
    more.addEventListener("click", () => attempt(() => page(next)));
    return { reload: () => attempt(() => page(null)) };
}

/** Wires a button's click to `action`, its error said instead of thrown. */
export function onClick(button, action) {
    button.addEventListener("click", () => attempt(action));
}

/** Wires a form's submit to `action` (the page does not reload). */
export function onSubmit(form, action) {
    form.addEventListener("submit", (event) => {
        event.preventDefault();
        attempt(action);
    });
}
