// Fulcio, Rekor and a GitHub Actions OIDC token endpoint for the keyless signing tests, served
// on 127.0.0.1 from sigstore-js's own stand-ins (npm `@sigstore/mock`: an ephemeral CA issuing
// leaf certificates with the Fulcio extensions for the token's `sub` and `iss`, and a Rekor log
// answering entries with a signed entry timestamp), the CA's certificates carrying an embedded
// SCT from the CT log below; run with NODE_PATH set to the node_modules holding
// `@sigstore/mock`.
//
//   node services.js REQUEST_TOKEN SUBJECT ISSUER
//     prints one line, {"url": BASE, "trustedRoot": TRUSTED_ROOT_JSON}, then serves until
//     killed:
//       POST BASE/api/v2/signingCert   Fulcio (the OIDC token is decoded, not verified)
//       POST BASE/api/v1/log/entries   Rekor
//       GET  BASE/actions/token?...&audience=AUD
//         GitHub Actions' ID token request (ACTIONS_ID_TOKEN_REQUEST_URL): with the header
//         `Authorization: bearer REQUEST_TOKEN`, answers {"value": JWT} for SUBJECT, ISSUER
//         and AUD (the JWT is not signed: the stand-in Fulcio does not check signatures).
'use strict';
const crypto = require('crypto');
const http = require('http');
const { fulcioHandler, initializeCA, initializeTLog, rekorHandler } = require('@sigstore/mock');

const [requestToken, subject, issuer] = process.argv.slice(2);
const START = new Date(Date.now() - 3600 * 1000).toISOString();

function p256() {
  return crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

function spki(keyPair) {
  return keyPair.publicKey.export({ format: 'der', type: 'spki' });
}

function b64url(value) {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function jwt(audience) {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: issuer, sub: subject, aud: audience, iat: now, exp: now + 600 };
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
}

// The TBSCertificate of a DER certificate: the first element of its outer SEQUENCE.
function tbsOf(der) {
  let i = 1;
  const outer = der[i++];
  if (outer & 0x80) i += outer & 0x7f;
  const start = i++;
  let length = der[i++];
  if (length & 0x80) {
    const n = length & 0x7f;
    length = 0;
    for (let k = 0; k < n; k++) length = length * 256 + der[i++];
  }
  return der.subarray(start, i + length);
}

function uint(value, bytes) {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(value, 0, bytes);
  return b;
}

// A CT log for the CA: an RFC 6962 SCT over the precertificate, returned with its length
// prefix as one entry of the SCT list. (@sigstore/mock's own CT log writes SCTs without the
// log ID and signature with the pkijs 3.4 it installs.)
function ctLog(keyPair) {
  const logID = crypto.createHash('sha256').update(spki(keyPair)).digest();
  return {
    publicKey: spki(keyPair),
    logID,
    log: async (preCert, issuerID) => {
      const timestamp = Buffer.alloc(8);
      timestamp.writeBigUInt64BE(BigInt(Date.now()));
      const tbs = tbsOf(Buffer.from(preCert));
      const signed = Buffer.concat([
        Buffer.from([0, 0]), // v1, certificate_timestamp
        timestamp,
        uint(1, 2), // precert_entry
        Buffer.from(issuerID),
        uint(tbs.length, 3),
        tbs,
        uint(0, 2), // no extensions
      ]);
      const signature = crypto.sign('sha256', signed, keyPair.privateKey);
      const sct = Buffer.concat([
        Buffer.from([0]),
        logID,
        timestamp,
        uint(0, 2),
        Buffer.from([4, 3]), // sha256, ecdsa
        uint(signature.length, 2),
        signature,
      ]);
      const entry = Buffer.concat([uint(sct.length, 2), sct]);
      return entry.buffer.slice(entry.byteOffset, entry.byteOffset + entry.length);
    },
  };
}

function trustedRoot(url, ca, ctKeys, tlogKeys) {
  const key = (keyPair) => ({
    rawBytes: spki(keyPair).toString('base64'),
    keyDetails: 'PKIX_ECDSA_P256_SHA_256',
    validFor: { start: START },
  });
  const logId = (keyPair) => ({
    keyId: crypto.createHash('sha256').update(spki(keyPair)).digest('base64'),
  });
  return {
    mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
    tlogs: [{ baseUrl: url, hashAlgorithm: 'SHA2_256', publicKey: key(tlogKeys), logId: logId(tlogKeys) }],
    certificateAuthorities: [{
      subject: { organization: 'sigstore.mock', commonName: 'sigstore' },
      uri: url,
      certChain: { certificates: [{ rawBytes: ca.rootCertificate.toString('base64') }] },
      validFor: { start: START },
    }],
    ctlogs: [{ baseUrl: url, hashAlgorithm: 'SHA2_256', publicKey: key(ctKeys), logId: logId(ctKeys) }],
    timestampAuthorities: [],
  };
}

async function main() {
  const ctKeys = p256();
  const tlogKeys = p256();
  const ca = await initializeCA(p256(), ctLog(ctKeys));
  const handlers = {};
  const server = http.createServer((req, res) => {
    const reply = (status, body, type) => {
      res.writeHead(status, { 'Content-Type': type || 'text/plain' });
      res.end(body);
    };
    const url = new URL(req.url, 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/actions/token') {
      if (req.headers.authorization !== `bearer ${requestToken}`) {
        return reply(401, 'bad request token');
      }
      return reply(200, JSON.stringify({ value: jwt(url.searchParams.get('audience')) }), 'application/json');
    }
    const handler = req.method === 'POST' && handlers[url.pathname];
    if (!handler) {
      return reply(404, 'not found');
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      handler.fn(Buffer.concat(chunks).toString())
        .then(({ statusCode, response, contentType }) => reply(statusCode, response, contentType))
        .catch((e) => reply(500, String(e)));
    });
  });
  server.listen(0, '127.0.0.1', async () => {
    const url = `http://127.0.0.1:${server.address().port}`;
    const tlog = await initializeTLog(url, tlogKeys);
    for (const h of [fulcioHandler(ca), rekorHandler(tlog)]) {
      handlers[h.path] = h;
    }
    console.log(JSON.stringify({ url, trustedRoot: trustedRoot(url, ca, ctKeys, tlogKeys) }));
  });
}

main().catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});
