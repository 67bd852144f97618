// Vite build of the dashboard: served by the server under /ui/ (src/server/ui_assets.cc embeds
// dist/ into the abacus binary). JSX is compiled for Preact by esbuild; no other plugin.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/ui/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    chunkSizeWarningLimit: 400,
  },
  server: {
    // `npm run dev` against a local server: ABACUS_URL=http://127.0.0.1:8420 npm run dev
    proxy: {
      '/api': process.env.ABACUS_URL || 'http://127.0.0.1:8420',
      '/readyz': process.env.ABACUS_URL || 'http://127.0.0.1:8420',
    },
  },
});
