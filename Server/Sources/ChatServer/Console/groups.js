// Groups: search, create, and one group's members, bans, ownership and deletion, all done
// by chatd in the owner's name.
import { api, path, query } from "./api.js";
import { $, el, attempt, facts, fill, onClick, onSubmit, pager, say, time } from "./dom.js";

const groups = "/v1/admin/groups";
const scopes = ["participant", "moderator", "admin"];
let current = null;

const list = pager($("#group-table tbody"), $("#group-more"),
    (cursor) => api("GET", groups + query({ searchKeyword: $("#group-search").value.trim(), cursor, limit: 25 })),
    (group) => el("tr", {},
        el("td", {}, group.guid),
        el("td", {}, group.name),
        el("td", {}, group.type),
        el("td", {}, group.membersCount),
        el("td", {}, group.owner),
        el("td", {}, el("button", {
            type: "button", class: "quiet", "aria-label": `Open group ${group.guid}`,
            onclick: () => attempt(() => open(group.guid)),
        }, "Open"))));

const members = pager($("#member-table tbody"), $("#member-more"),
    (cursor) => api("GET", path(groups, current, "members")
        + query({ searchKeyword: $("#member-search").value.trim(), cursor, limit: 50 })),
    memberRow);

function memberRow(member) {
    const uid = member.user.uid;
    const cells = [el("td", {}, uid), el("td", {}, member.user.name)];
    if (member.scope === "owner") {
        return el("tr", {}, ...cells, el("td", {}, "owner"), el("td", {}));
    }
    const scope = el("select", {
        "aria-label": `Scope of ${uid}`,
        onchange: async () => {
            const changed = await attempt(async () => {
                await api("PATCH", path(groups, current, "members", uid), { scope: scope.value });
                say(`${uid} is ${scope.value} now`);
            });
            if (!changed) scope.value = member.scope; // refused: show the scope chatd kept
            else member.scope = scope.value;
        },
    }, scopes.map((name) => el("option", { value: name, selected: name === member.scope }, name)));
    return el("tr", {}, ...cells, el("td", {}, scope), el("td", {}, el("div", { class: "row" },
        el("button", {
            type: "button", class: "danger", "aria-label": `Kick ${uid}`,
            onclick: () => attempt(async () => {
                if (!confirm(`Kick ${uid} from ${current}?`)) return;
                await api("DELETE", path(groups, current, "members", uid));
                say(`Kicked ${uid}`);
                await open(current);
            }),
        }, "Kick"),
        el("button", {
            type: "button", class: "danger", "aria-label": `Ban ${uid}`,
            onclick: () => attempt(() => ban(uid)),
        }, "Ban"))));
}

async function ban(uid) {
    if (!confirm(`Ban ${uid} from ${current}? They leave it and cannot come back until unbanned.`)) return;
    await api("PUT", path(groups, current, "bans", uid));
    say(`Banned ${uid}`);
    await open(current);
}

async function open(guid) {
    const group = await api("GET", path(groups, guid));
    current = group.guid;
    $("#group-detail").hidden = false;
    fill($("#group-detail-title"), `${group.name} (${group.guid})`);
    facts($("#group-facts"), [
        ["Type", group.type],
        ["Owner", group.owner],
        ["Members", String(group.membersCount)],
        ["Created", time(group.createdAt)],
        ["Description", group.description],
    ]);
    $("#bulk-result").value = "";
    await Promise.all([members.reload(), list.reload()]);
    const bans = await api("GET", path(groups, guid, "bans") + query({ limit: 100 }));
    fill($("#ban-list"), bans.items.length === 0 ? el("li", {}, "No one is banned") : bans.items.map((entry) =>
        el("li", {}, `${entry.user.name} (${entry.user.uid}) `, el("button", {
            type: "button", class: "quiet", "aria-label": `Unban ${entry.user.uid}`,
            onclick: () => attempt(async () => {
                await api("DELETE", path(groups, current, "bans", entry.user.uid));
                say(`Unbanned ${entry.user.uid}`);
                await open(current);
            }),
        }, "Unban"))));
}

/** The uids pasted in: split on commas and whitespace, each once. */
export const pastedUids = (text) => [...new Set(text.split(/[\s,]+/).filter((uid) => uid.length > 0))];

async function addMembers() {
    const uids = pastedUids($("#bulk-uids").value);
    if (uids.length === 0) throw new Error("Paste at least one uid");
    const scope = $("#bulk-scope").value;
    const counts = { added: 0, member: 0, failed: 0 };
    const failures = [];
    for (let start = 0; start < uids.length; start += 1000) {
        const batch = uids.slice(start, start + 1000).map((uid) => ({ uid, scope }));
        const answer = await api("POST", path(groups, current, "members"), { members: batch });
        for (const outcome of answer.members) {
            counts[outcome.status] += 1;
            if (outcome.status === "failed") failures.push(`${outcome.uid}: ${outcome.error?.message ?? "failed"}`);
        }
        $("#bulk-result").value = `${counts.added} added, ${counts.member} already members, ${counts.failed} failed`;
    }
    $("#bulk-result").value += failures.length ? ` (${failures.slice(0, 5).join("; ")})` : "";
    $("#bulk-uids").value = "";
    const summary = $("#bulk-result").value;
    await open(current);
    $("#bulk-result").value = summary;
    say(summary, counts.failed > 0);
}

export function startGroups() {
    onSubmit($("#group-search-form"), () => list.reload());
    onSubmit($("#member-search-form"), () => members.reload());
    onSubmit($("#group-create-form"), async () => {
        const guid = $("#new-group-guid").value.trim();
        await api("POST", groups, {
            owner: $("#new-group-owner").value.trim(),
            group: { guid, name: $("#new-group-name").value.trim(), type: $("#new-group-type").value },
        });
        say(`Created ${guid}`);
        $("#group-create-form").reset();
        await open(guid);
    });
    onSubmit($("#bulk-add-form"), addMembers);
    onSubmit($("#ban-form"), async () => {
        await ban($("#ban-uid").value.trim());
        $("#ban-form").reset();
    });
    onSubmit($("#transfer-form"), async () => {
        const uid = $("#transfer-uid").value.trim();
        await api("POST", path(groups, current, "owner"), { uid });
        say(`${uid} owns ${current} now`);
        $("#transfer-form").reset();
        await open(current);
    });
    onClick($("#delete-group"), async () => {
        if (!confirm(`Delete ${current}? Every member loses it at once; this cannot be undone.`)) return;
        await api("DELETE", path(groups, current));
        say(`Deleted ${current}`);
        current = null;
        $("#group-detail").hidden = true;
        await list.reload();
    });
}

export const showGroups = () => list.reload();
