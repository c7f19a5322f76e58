// Moderation: a conversation's recent messages (the read is audited) and deleting one for
// everyone (the apps see the deletion through sync and realtime like any other).
import { api, path, query } from "./api.js";
import { $, el, attempt, fill, onSubmit, say, time } from "./dom.js";

let conversation = null;

/** The conversation's id: a group's, or the two users' (their uids in order, joined by `~`). */
export function conversationId(group, a, b) {
    if (group) return `group_${group}`;
    if (!a || !b) throw new Error("Give a group guid, or two users' uids");
    return a < b ? `${a}~${b}` : `${b}~${a}`;
}

function describe(message) {
    if (message.deletedAt) return el("span", { class: "deleted" }, `deleted ${time(message.deletedAt)}`);
    if (message.category === "action") return el("span", { class: "note" }, `[${message.type}]`);
    if (message.text !== undefined && message.text !== null) return el("span", { class: "text" }, message.text);
    if (message.attachment) return el("span", {}, `[${message.type}: ${message.attachment.name ?? message.attachment.url}]`);
    return el("span", { class: "note" }, `[${message.category}/${message.type}]`);
}

function messageItem(message) {
    const deletable = !message.deletedAt && message.category !== "action";
    return el("li", { "data-message-id": message.id },
        el("div", {},
            el("div", { class: "meta" }, `#${message.id} · ${message.sender} · ${time(message.sentAt)}`),
            describe(message)),
        deletable ? el("button", {
            type: "button", class: "danger", "aria-label": `Delete message ${message.id} for everyone`,
            onclick: () => attempt(async () => {
                if (!confirm(`Delete message ${message.id} for everyone?`)) return;
                await api("DELETE", path("/v1/admin/messages", String(message.id)));
                say(`Deleted message ${message.id} for everyone`);
                await show();
            }),
        }, "Delete for everyone") : el("span"));
}

async function show() {
    const messages = await api("GET", path("/v1/admin/conversations", conversation, "messages") + query({ limit: 50 }));
    fill($("#conversation-title"), `${conversation}: the ${messages.length} most recent messages`);
    fill($("#message-list"), messages.length === 0 ? el("li", {}, "No messages") : messages.map(messageItem));
}

export function startModeration() {
    onSubmit($("#conversation-form"), async () => {
        conversation = conversationId(
            $("#conversation-group").value.trim(), $("#conversation-a").value.trim(), $("#conversation-b").value.trim());
        await show();
    });
}
