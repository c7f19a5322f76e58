// Users: search, create, and one user's presence, groups, tokens and suspension.
import { api, path, query } from "./api.js";
import { $, el, attempt, facts, fill, onClick, onSubmit, pager, say, time } from "./dom.js";

const users = "/v1/admin/users";
let current = null;

const list = pager($("#user-table tbody"), $("#user-more"),
    (cursor) => api("GET", users + query({ searchKeyword: $("#user-search").value.trim(), cursor, limit: 25 })),
    (view) => el("tr", {},
        el("td", {}, view.user.uid),
        el("td", {}, view.user.name),
        el("td", {}, view.user.status ?? "—"),
        el("td", {}, view.activeTokens),
        el("td", {}, view.suspendedAt ? time(view.suspendedAt) : "no"),
        el("td", {}, el("button", {
            type: "button", class: "quiet", "aria-label": `Open user ${view.user.uid}`,
            onclick: () => attempt(() => open(view.user.uid)),
        }, "Open"))));

async function open(uid) {
    const view = await api("GET", path(users, uid));
    current = view.user.uid;
    const detail = $("#user-detail");
    detail.hidden = false;
    fill($("#user-detail-title"), `${view.user.name} (${view.user.uid})`);
    facts($("#user-facts"), [
        ["Presence", view.user.status],
        ["Created", time(view.createdAt)],
        ["Last active", view.user.lastActiveAt ? time(view.user.lastActiveAt * 1000) : "never"],
        ["Live tokens", String(view.activeTokens)],
        ["Suspended", view.suspendedAt ? `since ${time(view.suspendedAt)}` : "no"],
        ["Role", view.user.role],
    ]);
    $("#suspend-user").hidden = Boolean(view.suspendedAt);
    $("#unsuspend-user").hidden = !view.suspendedAt;
    $("#issued").hidden = true;
    const groups = await api("GET", path(users, uid, "groups") + query({ limit: 100 }));
    fill($("#user-groups"), groups.items.length === 0
        ? el("li", {}, "No groups")
        : groups.items.map((group) => el("li", {}, `${group.name} (${group.guid}) — ${group.scope}`)));
    detail.focus();
}

async function refresh() {
    await list.reload();
    if (current) await open(current);
}

export function startUsers() {
    onSubmit($("#user-search-form"), () => list.reload());
    onSubmit($("#user-create-form"), async () => {
        const uid = $("#new-user-uid").value.trim();
        const name = $("#new-user-name").value.trim();
        await api("POST", users, name ? { uid, name } : { uid });
        say(`Created ${uid}`);
        $("#user-create-form").reset();
        await list.reload();
        await open(uid);
    });
    onClick($("#issue-token"), async () => {
        const issued = await api("POST", path(users, current, "tokens"), {});
        $("#issued-token").value = issued.authToken;
        $("#issued").hidden = false;
        $("#issued-token").focus();
        say(`Issued a token for ${current}; it is shown only here`);
    });
    onClick($("#copy-token"), async () => {
        const field = $("#issued-token");
        // The Clipboard API needs a secure page (https or localhost); elsewhere, the selection.
        if (navigator.clipboard) await navigator.clipboard.writeText(field.value);
        else if (!(field.select(), document.execCommand("copy"))) throw new Error("Copy it by hand: it is selected");
        say("Copied");
    });
    onClick($("#revoke-tokens"), async () => {
        if (!confirm(`Revoke every token of ${current}? Their apps are signed out.`)) return;
        const revoked = await api("DELETE", path(users, current, "tokens"));
        say(`Revoked ${revoked.revokedTokens} token(s) of ${current}`);
        await refresh();
    });
    onClick($("#suspend-user"), async () => {
        if (!confirm(`Suspend ${current}? Every token is revoked and none issued until lifted.`)) return;
        await api("PUT", path(users, current, "suspension"));
        say(`Suspended ${current}`);
        await refresh();
    });
    onClick($("#unsuspend-user"), async () => {
        await api("DELETE", path(users, current, "suspension"));
        say(`Lifted the suspension of ${current}`);
        await refresh();
    });
}

export const showUsers = () => list.reload();
