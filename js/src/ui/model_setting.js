// @ts-check
/**
 * "Semantic model: automatic / always / never", a section of the dialog's settings panel
 * (the gear; ask.js hosts it). A select, not radio buttons: Enter in it must not submit
 * the panel's LLM form. A choice applies at once (model_policy.js says what it means, the
 * worker starts, stops or drops the model) and is kept per site by ModelChoiceStore.
 * Shown only on sites that ship the model (the worker's "tiers" message).
 * @module model_setting
 */

import { h } from "./dom.js";

const PREFIX = "sphinx-rag";

/** @typedef {import("./model_policy.js").ModelChoice} ModelChoice */
/** @typedef {import("./model_policy.js").ModelPlan} ModelPlan */

/** @type {Record<ModelChoice, string>} */
const LABELS = { auto: "Automatic", always: "Always", never: "Never" };

/**
 * What the choice means here and now, below the select.
 * @param {ModelChoice} choice
 * @param {ModelPlan} plan
 * @param {string} size  what the download weighs ("24 MB + 14 MB runtime")
 * @param {boolean} encoder  whether the site has a static encoder (quick semantic results)
 * @param {boolean} stored  whether the choice could be kept in this browser
 */
export function choiceNote(choice, plan, size, encoder, stored) {
  const without = encoder ? "keyword and quick semantic results from the site's encoder" : "keyword results only";
  const kept = stored ? " Kept for this site in this browser." : " This browser does not let the page keep it.";
  if (choice === "never") return `Never: no download; ${without}.${kept}`;
  if (choice === "always") {
    return `Always: the semantic model (${size}) downloads once, in the background, as soon as the search ` +
      `opens, even when the browser asks to save data.${kept}`;
  }
  return `Automatic: the semantic model (${size}) ranks questions best; it downloads once, in the background, ` +
    "when a question or a query without a good match needs it (not for a name the keyword search finds), " +
    "unless the browser asks to save data, the connection is slow or the device has little memory " +
    `(then: ${without}). Now: ${plan.load ? "on" : `off (${plan.why})`}.${kept}`;
}

export class ModelSetting {
  /**
   * @param {{onChange: (choice: ModelChoice) => void}} options
   */
  constructor({ onChange }) {
    const id = (/** @type {string} */ s) => `${PREFIX}-${s}`;
    this.select = /** @type {HTMLSelectElement} */ (h("select", {
      id: id("model-choice"), name: "model-choice", "aria-describedby": id("model-note"),
    }, Object.entries(LABELS).map(([value, label]) => h("option", { value }, [label]))));
    this.note = h("p", { id: id("model-note"), class: id("model-note") });
    this.element = h("div", { class: id("model-setting"), hidden: "" }, [
      h("div", { class: id("field") }, [h("label", { for: this.select.id }, ["Semantic model"]), this.select]),
      this.note,
    ]);
    this.size = "";
    this.encoder = false;
    this.select.addEventListener("change", () => onChange(/** @type {ModelChoice} */ (this.select.value)));
  }

  /**
   * What the site offers (the worker's "tiers" message): the section shows when it ships the model.
   * @param {{bytes: number, size: string} | null} model
   * @param {boolean} encoder
   */
  setSite(model, encoder) {
    this.element.hidden = !model;
    this.size = model?.size ?? "";
    this.encoder = encoder;
  }

  /**
   * @param {ModelChoice} choice
   * @param {ModelPlan} plan
   * @param {boolean} stored
   */
  show(choice, plan, stored) {
    this.select.value = choice;
    this.note.textContent = choiceNote(choice, plan, this.size || "about 40 MB", this.encoder, stored);
  }
}
