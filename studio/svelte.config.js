// Svelte's compiler options for the Studio: the defaults (runes).
export default {};
