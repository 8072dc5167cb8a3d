// The link to a game's rules for players (/web/rules/<type>), as every table, replay and the
// lobby show it.
import { h } from "./dom.js";

export const rulesHref = (type) => `/web/rules/${encodeURIComponent(type)}`;

export function rulesLink(type, title = "") {
  return h("a", { class: "rules-link", href: rulesHref(type), id: "rules-link" }, title ? `Rules of ${title}` : "Rules");
}
