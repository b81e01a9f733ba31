import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The Studio is served by the origin under /studio/ (see origin/studio.go):
// index.html for every page path, the hashed files of assets/ for good.
export default defineConfig({
  base: '/studio/',
  plugins: [svelte()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1000,
    // The build's timings are noise in the test output.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
});
