/**
 * @module
 * A WebSocket with no client library in between: the handshake and frames written by hand, so a
 * test sees exactly what the relay sends and when, and can send what no library would (a close
 * frame with a code no endpoint may send, or none).
 */
import { randomBytes } from "node:crypto";
import { connect } from "node:net";

export interface CloseFrame {
  /** `undefined`: the frame carried no status code. */
  code: number | undefined;
  reason: string;
  /** When it came, in ms from the upgrade. */
  afterMs: number;
}

/** A client frame: masked, as RFC 6455 requires of clients; payloads under 126 bytes. */
function clientFrame(opcode: number, payload: Uint8Array): Buffer {
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), mask, masked]);
}

/** A close frame's payload: the code (two bytes) and reason, or nothing. */
export function closePayload(code?: number, reason = ""): Uint8Array {
  if (code === undefined) return new Uint8Array(0);
  const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
  payload.writeUInt16BE(code, 0);
  payload.write(reason, 2);
  return payload;
}

/**
 * The first close frame the relay sends on a raw WebSocket to `path`; with `close`, once the
 * socket is open, the client first sends a close frame with that payload.
 */
export function firstCloseFrame(port: number, path: string, options: { close?: Uint8Array } = {}): Promise<CloseFrame> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const deadline = setTimeout(() => fail(new Error(`no close frame on ${path} within 10 s`)), 10_000);
    const fail = (e: Error) => {
      clearTimeout(deadline);
      socket.destroy();
      reject(e);
    };
    let buffer = Buffer.alloc(0);
    let upgradedAt: number | undefined;
    socket.on("error", fail);
    socket.on("connect", () => {
      const key = randomBytes(16).toString("base64");
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    socket.on("data", (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      if (upgradedAt === undefined) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const status = buffer.subarray(0, buffer.indexOf("\r\n")).toString();
        if (!status.includes(" 101 ")) return fail(new Error(`no upgrade: ${status}`));
        upgradedAt = performance.now();
        buffer = buffer.subarray(end + 4);
        if (options.close) socket.write(clientFrame(0x8, options.close));
      }
      // Server frames are unmasked: opcode, then a 7-bit, 16-bit or 64-bit length.
      while (buffer.length >= 2) {
        const opcode = (buffer[0] as number) & 0x0f;
        let length = (buffer[1] as number) & 0x7f;
        let offset = 2;
        if (length === 126) [length, offset] = [buffer.readUInt16BE(2), 4];
        else if (length === 127) [length, offset] = [Number(buffer.readBigUInt64BE(2)), 10];
        if (buffer.length < offset + length) return;
        const payload = buffer.subarray(offset, offset + length);
        buffer = buffer.subarray(offset + length);
        if (opcode === 8) {
          clearTimeout(deadline);
          socket.destroy();
          resolve({ code: payload.length >= 2 ? payload.readUInt16BE(0) : undefined, reason: payload.subarray(2).toString(), afterMs: performance.now() - upgradedAt });
          return;
        }
      }
    });
  });
}
