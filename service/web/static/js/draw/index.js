import { draw as speculation } from "./speculation.js";
import { draw as spekulation } from "./spekulation.js";
import { draw as speculate } from "./speculate.js";
import { draw as bigShot } from "./big-shot.js";

export const drawers = { speculation, spekulation, speculate, "big-shot": bigShot };
