// Serves the manager (the web page built from manager/ by Vite) at /manager, with cache and security headers.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

export interface ManagerPageOptions {
  /** The folder holding the built page (index.html and assets/). */
  root: string;
}

/** Where the build of manager/ lands: `manager/dist` beside the package.json above this module (source or compiled). */
export function defaultManagerRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return join(dir, 'manager', 'dist');
}

/** Nothing from elsewhere: scripts, styles, images and connections (the socket.io websocket included) from this origin only. */
function contentSecurityPolicy(host: string | undefined): string {
  // 'self' covers ws(s) to the same host in current browsers; the explicit form helps older ones. Host checked first.
  const sockets = host && /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${sockets}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const notBuiltPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard manager: not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; line-height: 1.5">
<h1>The manager is not built</h1>
<p>This Switchboard serves its API, but the files of the manager page are missing. Build them once with</p>
<pre>npm run build:manager</pre>
<p>(<code>npm run build</code> builds it too) and reload this page. The API and its documentation are at <a href="/messenger/docs">/messenger/docs</a>.</p>
</body></html>
`;

export const managerPage: FastifyPluginAsync<ManagerPageOptions> = async (app, { root }) => {
  await app.register(fastifyStatic, { root, serve: false });

  app.addHook('onSend', async (request, reply) => {
    reply.header('content-security-policy', contentSecurityPolicy(request.headers.host));
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
  });

  const sendIndex = (reply: FastifyReply) => {
    // Checked at each request: a build made after the start is picked up without a restart.
    if (!existsSync(join(root, 'index.html'))) {
      return reply.status(404).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(notBuiltPage);
    }
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };

  app.get('/manager', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => sendIndex(reply));

  app.get<{ Params: { '*': string } }>('/manager/*', { config: { access: 'public' }, schema: { hide: true } }, async (request, reply) => {
    const file = request.params['*'];
    if (file === '' || file === 'index.html') return sendIndex(reply);
    // Vite names every asset after a hash of its content: a name never changes its bytes.
    if (file.startsWith('assets/')) return reply.sendFile(file, { maxAge: 365 * 24 * 3600 * 1000, immutable: true });
    return reply.header('cache-control', 'no-cache').sendFile(file, { cacheControl: false });
  });
};
