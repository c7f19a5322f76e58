// The audit trail: every admin action, newest first.
import { api, query } from "./api.js";
import { $, el, pager, time } from "./dom.js";

const trail = pager($("#audit-table tbody"), $("#audit-more"),
    (cursor) => api("GET", "/v1/admin/audit" + query({ cursor, limit: 50 })),
    (entry) => el("tr", {}, el("td", {}, time(entry.at)), el("td", {}, entry.action), el("td", {}, entry.target)));

export const showAudit = () => trail.reload();
