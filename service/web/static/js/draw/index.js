// A game's title and drawer, as the service declares them (GET /v1/game-types): no page lists
// the games. A drawer is an ES module of this folder exporting `draw(state, ctx)`, loaded when
// a page first shows that game, and optionally `jumps` (the replay's units).
import { gameTypes } from "../api.js";

// A game registered with its rules alone (the tests' toy game) has no drawer: its raw state.
const RAW_STATE = new URL("./state.js", import.meta.url).href;

export async function gameLook(name) {
  const type = (await gameTypes()).find((t) => t.name === name);
  const { draw, jumps = [] } = await import(type && type.drawer ? type.drawer : RAW_STATE);
  return { title: type ? type.title : name, draw, jumps };
}
