// A game's title and drawer, as the service declares them (GET /v1/game-types): no page lists
// the games. A drawer is an ES module of this folder exporting `draw(state, ctx)`, loaded when
// a page first shows that game.
import { gameTypes } from "../api.js";
import { h } from "../dom.js";

// A game registered with its rules alone (the tests' toy game) has no drawer: its raw state.
function rawState(state) {
  return h("pre", { class: "card raw-state" }, JSON.stringify(state, null, 2));
}

export async function gameLook(name) {
  const type = (await gameTypes()).find((t) => t.name === name);
  const draw = type && type.drawer ? (await import(type.drawer)).draw : rawState;
  return { title: type ? type.title : name, draw };
}
