// compare.js — the same faults under every design, side by side (engine.compare's answer), each panel small.
// Guarantees: one panel per design in the engine's order, each with the design's swatch (its colour in every
// figure), its name, its verdict in words (green holds / red broken), the story's check (neutral) and its scene
// drawn compact on its own time scale; a design that breaks a property has its panel outlined red; choosing a
// panel calls onChoose(design).

import { drawScene } from "./draw.js";

const SWATCH = { naive: "#000000", "check-then-insert": "#56B4E9", "same-tx": "#0072B2", "committed-first": "#E69F00",
  "split-tx": "#666666", "recovery-points": "#882255" };
const DASH = { "check-then-insert": "dashed", "committed-first": "dashed", "split-tx": "dotted", "recovery-points": "dashed" };

export function showComparison(container, result, { words, onChoose }) {
  container.replaceChildren();
  for (const answer of result.designs || []) {
    const scene = answer.scene;
    const design = answer.state ? answer.state.design : scene.design;
    const holds = scene.verdicts.holds;
    const panel = document.createElement("button");
    panel.type = "button";
    panel.className = `panel ${holds ? "holds" : "broken"}`;
    panel.dataset.design = design;
    panel.title = words.open_design;
    const head = document.createElement("h3");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.borderTopColor = SWATCH[design] || "#A6A6A6";
    swatch.style.borderTopStyle = DASH[design] || "solid";
    head.append(swatch, design);
    const verdict = document.createElement("p");
    verdict.className = `verdict ${holds ? "holds" : "broken"}`;
    verdict.textContent = scene.verdicts.design;
    const story = document.createElement("p");
    story.className = "verdict neutral";
    story.textContent = scene.verdicts.story;
    const svg = document.createRange().createContextualFragment('<svg role="img"></svg>').firstElementChild;
    svg.setAttribute("aria-label", `${design}: ${scene.verdicts.design}`);
    panel.append(head, verdict, story, svg);
    container.append(panel);
    const width = Math.max(360, panel.clientWidth - 14);
    drawScene(svg, scene, { width, compact: true, words });
    panel.addEventListener("click", () => onChoose(design));
  }
}
