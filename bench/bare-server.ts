// Baseline for the send benchmark: a bare Fastify server that parses a JSON body and answers 201 with a small JSON.
// Run as its own process by bench/sends.ts (PORT from the environment); nothing of Switchboard is loaded.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const app = Fastify({ logger: false });

app.post('/send', async (request, reply) => {
  const body = request.body as { number?: unknown; text?: unknown } | null;
  return reply.status(201).send({
    key: { remoteJid: `${String(body?.number ?? '')}@s.whatsapp.net`, fromMe: true, id: randomUUID() },
    status: 'PENDING',
    message: { conversation: String(body?.text ?? '') },
  });
});

const port = Number(process.env.PORT ?? 0);
await app.listen({ port, host: '127.0.0.1' });

const stop = () => {
  void app.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
