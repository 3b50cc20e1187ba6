/**
 * What an MCP App is told about the page it sits in (its host context): the theme the page shows (light or dark),
 * inline display only, and KNIME's design tokens under the spec's style variable names, as the page computes them
 * (colours resolved to the value the page paints, so an app needs no light-dark() of its own).
 */

/** The spec's style variables (McpUiStyleVariableKey) and the KNIME token (kds-styles) each one takes its value from. */
const TOKENS = {
  "--color-background-primary": "--kds-color-page-default",
  "--color-background-secondary": "--kds-color-surface-default",
  "--color-background-tertiary": "--kds-color-surface-muted",
  "--color-background-inverse": "--kds-color-text-and-icon-neutral",
  "--color-background-info": "--kds-color-background-static-info-muted",
  "--color-background-danger": "--kds-color-background-static-danger-muted",
  "--color-background-success": "--kds-color-background-static-success-muted",
  "--color-background-warning": "--kds-color-background-static-warning-muted",
  "--color-background-disabled": "--kds-color-background-disabled-default",
  "--color-text-primary": "--kds-color-text-and-icon-neutral",
  "--color-text-secondary": "--kds-color-text-and-icon-muted",
  "--color-text-tertiary": "--kds-color-text-and-icon-subtle",
  "--color-text-inverse": "--kds-color-text-and-icon-neutral-inverted",
  "--color-text-info": "--kds-color-text-and-icon-info",
  "--color-text-danger": "--kds-color-text-and-icon-danger",
  "--color-text-success": "--kds-color-text-and-icon-success",
  "--color-text-warning": "--kds-color-text-and-icon-warning",
  "--color-text-disabled": "--kds-color-text-and-icon-disabled",
  "--color-border-primary": "--kds-color-border-neutral",
  "--color-border-secondary": "--kds-color-border-muted",
  "--color-border-tertiary": "--kds-color-border-subtle",
  "--color-border-info": "--kds-color-border-info",
  "--color-border-danger": "--kds-color-border-danger",
  "--color-border-success": "--kds-color-border-success",
  "--color-border-warning": "--kds-color-border-warning",
  "--color-border-disabled": "--kds-color-border-disabled",
  "--color-ring-primary": "--kds-color-border-selected-accent",
  "--font-sans": "--kds-core-font-family-roboto",
  "--font-mono": "--kds-core-font-family-roboto-mono",
  "--font-weight-normal": "--kds-core-font-weight-regular",
  "--font-weight-medium": "--kds-core-font-weight-medium",
  "--font-weight-semibold": "--kds-core-font-weight-medium",
  "--font-weight-bold": "--kds-core-font-weight-strong",
  "--font-text-xs-size": "--kds-core-font-size-0-68x",
  "--font-text-sm-size": "--kds-core-font-size-0-75x",
  "--font-text-md-size": "--kds-core-font-size-0-87x",
  "--font-text-lg-size": "--kds-core-font-size-1x",
  "--font-heading-xs-size": "--kds-core-font-size-0-87x",
  "--font-heading-sm-size": "--kds-core-font-size-1x",
  "--font-heading-md-size": "--kds-core-font-size-1-13x",
  "--font-heading-lg-size": "--kds-core-font-size-1-25x",
  "--font-heading-xl-size": "--kds-core-font-size-1-5x",
  "--border-radius-xs": "--kds-border-radius-container-0-12x",
  "--border-radius-sm": "--kds-border-radius-container-0-25x",
  "--border-radius-md": "--kds-border-radius-container-0-37x",
  "--border-radius-lg": "--kds-border-radius-container-0-50x",
  "--border-radius-full": "--kds-border-radius-container-pill",
  "--border-width-regular": "--kds-core-border-width-xs",
};

/** `token`'s value as the page paints it: colours through a probe element (resolving light-dark()), others as set. */
function tokenValue(token, styles, probe) {
  const raw = styles.getPropertyValue(token).trim();
  if (!raw || !probe) return raw;
  probe.style.color = "";
  probe.style.color = `var(${token})`;
  return getComputedStyle(probe).color;
}

/** The style variables from the page's KNIME tokens: only those the page defines. */
function styleVariables() {
  const styles = getComputedStyle(document.documentElement);
  const probe = document.createElement("span");
  probe.hidden = true;
  document.body.append(probe);
  try {
    const variables = {};
    for (const [key, token] of Object.entries(TOKENS)) {
      const value = tokenValue(token, styles, key.startsWith("--color-") ? probe : null);
      if (value) variables[key] = value;
    }
    return variables;
  } finally {
    probe.remove();
  }
}

/** "dark" when the page's background is dark (as the page shows it, whatever chose its colours), else "light". */
function pageTheme() {
  const channels = getComputedStyle(document.body).backgroundColor.match(/[\d.]+/g)?.map(Number) ?? [];
  const [red, green, blue, alpha = 1] = channels;
  if (channels.length < 3 || alpha === 0) return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  return 0.2126 * red + 0.7152 * green + 0.0722 * blue < 128 ? "dark" : "light";
}

/** The host context an app gets now (sent again when the page's colour scheme changes). */
export function hostContext() {
  return {
    theme: pageTheme(),
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    platform: "desktop",
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    styles: { variables: styleVariables() },
  };
}

/** Calls `changed()` whenever the person's colour scheme changes (the page follows it). */
export function onThemeChange(changed) {
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", changed);
}
