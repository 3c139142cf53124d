// Redis Cluster key slot: CRC16-XMODEM of the hash tag (or whole key) mod 16384.
const TABLE = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let c = i << 8;
  for (let j = 0; j < 8; j++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1;
  TABLE[i] = c & 0xffff;
}

export function keySlot(key: string): number {
  let s = key;
  const open = key.indexOf("{");
  if (open !== -1) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) s = key.slice(open + 1, close);
  }
  const bytes = Buffer.from(s, "utf8");
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ b) & 0xff]!;
  return crc % 16384;
}
