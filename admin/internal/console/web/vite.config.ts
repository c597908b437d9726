import tailwindcss from "@tailwindcss/vite";
import { defineConfig } from "vite";

// The console builds into ../dist, which the admin embeds (go:embed). No
// inline script or style: the admin's Content-Security-Policy allows only
// its own origin.
export default defineConfig({
  plugins: [tailwindcss()],
  esbuild: { jsx: "automatic" },
  build: {
    outDir: "../dist",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    rollupOptions: {
      // React Server Components' "use client" means nothing in a browser bundle.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
  server: { proxy: { "/carillon.v1.": "http://127.0.0.1:8080" } },
});
