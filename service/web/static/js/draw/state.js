// Any game's state as it is: the drawer a new game may declare until it has its own, and the
// one a game registered with its rules alone (the tests' toy game) is shown with.
import { h } from "../dom.js";

export function draw(state) {
  return h("pre", { class: "card raw-state" }, JSON.stringify(state, null, 2));
}
