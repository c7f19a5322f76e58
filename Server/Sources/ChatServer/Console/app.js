// The console: sign in with the admin key, then one screen at a time by the URL's fragment.
import { api, forgetKey, hasKey, setKey, whenRefused } from "./api.js";
import { $, fill, onSubmit } from "./dom.js";
import { showAudit } from "./audit.js";
import { showGroups, startGroups } from "./groups.js";
import { showHealth, stopHealth } from "./health.js";
import { startModeration } from "./moderation.js";
import { showUsers, startUsers } from "./users.js";

const screens = {
    users: showUsers,
    groups: showGroups,
    moderation: () => {},
    health: showHealth,
    audit: showAudit,
};

let signedIn = false;

function show() {
    if (!signedIn) return;
    const name = Object.hasOwn(screens, location.hash.slice(1)) ? location.hash.slice(1) : "users";
    for (const screen of Object.keys(screens)) $(`#${screen}`).hidden = screen !== name;
    for (const link of document.querySelectorAll("#nav a")) {
        if (link.getAttribute("href") === `#${name}`) link.setAttribute("aria-current", "page");
        else link.removeAttribute("aria-current");
    }
    screens[name]();
}

/** Whether chatd takes the key: one admin read, nothing else loads before it answers. */
async function check() {
    try {
        await api("GET", "/v1/admin/audit?limit=1");
        return null;
    } catch (error) {
        return error.status === 401
            ? "chatd refused that admin key. Check it (chatd prints it once; it is kept in the data directory's admin.key)."
            : `chatd could not check the key: ${error.message}`;
    }
}

async function enter() {
    const refusal = await check();
    if (refusal) {
        signOut(refusal);
        return;
    }
    signedIn = true;
    $("#sign-in").hidden = true;
    $("#nav").hidden = false;
    show();
    $("#main").focus();
}

function signOut(message = "") {
    signedIn = false;
    forgetKey();
    stopHealth();
    for (const screen of Object.keys(screens)) $(`#${screen}`).hidden = true;
    $("#nav").hidden = true;
    // Nothing read with the key stays in the page.
    for (const body of document.querySelectorAll("tbody, #user-groups, #ban-list, #message-list")) body.replaceChildren();
    for (const detail of document.querySelectorAll("article")) detail.hidden = true;
    for (const form of document.querySelectorAll("form")) form.reset();
    $("#issued-token").value = "";
    fill($("#conversation-title"));
    $("#sign-in").hidden = false;
    fill($("#sign-in-error"), message);
    $("#admin-key").value = "";
    $("#admin-key").focus();
}

startUsers();
startGroups();
startModeration();
whenRefused(() => signOut("chatd no longer takes this admin key: sign in again."));
onSubmit($("#sign-in-form"), async () => {
    fill($("#sign-in-error"));
    setKey($("#admin-key").value.trim());
    await enter();
});
$("#sign-out").addEventListener("click", () => signOut());
// The skip link moves the focus without changing the fragment (which names the screen).
$(".skip").addEventListener("click", (event) => {
    event.preventDefault();
    $("#main").focus();
});
window.addEventListener("hashchange", show);
if (hasKey()) enter();
