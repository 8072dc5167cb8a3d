// The rules pages (/web/rules/...): static text for players; this module only draws the
// header's links and who is signed in, as every page does.
import { nav } from "./ui.js";

nav([["/web/rules/", "Rules"]]);
