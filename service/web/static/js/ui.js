// Small shared page pieces: the toast line and the navigation.
import { h, replace, $ } from "./dom.js";

export function toast(message, isError = false) {
  const el = $("#toast");
  el.className = isError ? "show error" : "show";
  el.textContent = message;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.className = ""; }, isError ? 8000 : 3500);
}

export function nav(links) {
  replace($("#nav"), h("a", { href: "/web/" }, "Lobby"), links.map(([href, text]) => h("a", { href }, text)));
}
