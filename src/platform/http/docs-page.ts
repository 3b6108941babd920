// The docs page's look: Switchboard's title, mark and favicon, served by the page itself (no outside assets).

/** Switchboard's mark: a patch panel of three lines joined by cords, in the project's green. */
const switchboardMark = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img" aria-label="Switchboard">
<rect x="2" y="2" width="60" height="60" rx="12" fill="#14532d"/>
<g fill="#bbf7d0"><circle cx="18" cy="18" r="5"/><circle cx="46" cy="18" r="5"/><circle cx="18" cy="32" r="5"/><circle cx="46" cy="32" r="5"/><circle cx="18" cy="46" r="5"/><circle cx="46" cy="46" r="5"/></g>
<g fill="none" stroke="#4ade80" stroke-width="3.5" stroke-linecap="round"><path d="M18 18 C32 18 32 46 46 46"/><path d="M18 46 C32 46 32 32 46 32"/><path d="M18 32 C30 32 34 18 46 18"/></g>
</svg>`;

/** The mark followed by the product's name, for the page's top bar. */
const banner = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 260 64" width="195" height="48" role="img" aria-label="Switchboard">
${switchboardMark.replace('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img" aria-label="Switchboard">', '<g>').replace('</svg>', '</g>')}
<text x="76" y="42" font-family="Helvetica, Arial, sans-serif" font-size="28" font-weight="700" fill="#ffffff">Switchboard</text>
</svg>`;

/** The page title (the browser tab). */
export const docsTitle = 'Switchboard API';

/** Options of @fastify/swagger-ui: the title, the mark in the top bar (linking to the page itself) and the favicon. */
export function docsPageOptions(routePrefix: string) {
  return {
    routePrefix,
    uiConfig: { docExpansion: 'list' as const },
    logo: { type: 'image/svg+xml', content: Buffer.from(banner), href: routePrefix, target: '_self' as const },
    theme: {
      title: docsTitle,
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(switchboardMark) }],
      css: [{ filename: 'switchboard.css', content: '.swagger-ui .topbar { background-color: #14532d; }' }],
    },
  };
}
