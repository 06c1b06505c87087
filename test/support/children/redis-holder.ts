// `node redis-holder.js`: starts a test redis-server as a test file does, prints
// `{"port","dir"}`, and waits to be killed (the test of what becomes of its server then).
import { RedisServer } from "../redis-server.js";

const server = new RedisServer();
await server.start();
console.log(JSON.stringify({ port: server.port, dir: server.dir }));
setInterval(() => {}, 60_000);
