// Test authorization server: the npm `oidc-provider` (a certified OpenID Connect / OAuth 2 implementation) on
// 127.0.0.1, configured as MCP's authorization specification expects: dynamic client registration (RFC 7591), PKCE
// (S256), resource indicators (RFC 8707), refresh tokens, the client credentials grant and token introspection
// (RFC 7662), with the provider's own login and consent pages (devInteractions) for a scripted user agent.
//
//   node oidc-provider.mjs [--access-token-ttl SECONDS] [--client-metadata-tls DIR] [--dpop off|on|nonce]
//                          [--client-auth-algs ALG,ALG]
//
// With --client-metadata-tls (a folder holding cert.pem and key.pem, a test certificate for 127.0.0.1), it also serves
// a client ID metadata document for knime-mcp over https on 127.0.0.1, as an organisation would publish one, prints
// `client metadata document at URL`, and takes clients named by such documents, trusting that certificate alone.
//
// Pre-registered clients: `knime-mcp-desktop` (public, native: any loopback port), `knime-mcp-short-lived` (the same,
// with access tokens that live 2 s), `knime-mcp-ci` (confidential,
// client credentials) and `mcp-resource-server` (introspection). Secrets come from the environment, never the command
// line: KNIME_MCP_TEST_CLIENT_SECRET for `knime-mcp-ci`, KNIME_MCP_TEST_INTROSPECTION_SECRET for `mcp-resource-server`. Tokens may be asked for any resource on 127.0.0.1.
// Prints `oidc-provider listening on http://127.0.0.1:PORT` once it takes requests.

import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { parseArgs } from "node:util";

import Provider, { errors } from "oidc-provider";

const { values } = parseArgs({
  options: {
    "access-token-ttl": { type: "string", default: "3600" },
    "client-metadata-tls": { type: "string" },
    dpop: { type: "string", default: "off" },
    "client-auth-algs": { type: "string" },
  },
});
const accessTokenTtl = Number(values["access-token-ttl"]);
const SCOPES = ["mcp:read", "mcp:write"];
// --dpop on: DPoP-bound tokens (RFC 9449) for clients that send proofs; --dpop nonce: and every proof must carry a
// nonce the server gave (use_dpop_nonce). KNIME_MCP_TEST_CLIENT_JWKS (public keys, JSON) adds the client
// `knime-mcp-jwt`: client credentials with private_key_jwt authentication (RFC 7523).
const dpop = values.dpop === "off" ? { enabled: false } : {
  enabled: true,
  nonceSecret: Buffer.alloc(32, 7),
  requireNonce: () => values.dpop === "nonce",
};
const jwtClients = process.env.KNIME_MCP_TEST_CLIENT_JWKS ? [{
  client_id: "knime-mcp-jwt",
  token_endpoint_auth_method: "private_key_jwt",
  jwks: JSON.parse(process.env.KNIME_MCP_TEST_CLIENT_JWKS),
  grant_types: ["client_credentials"],
  redirect_uris: [],
  response_types: [],
  scope: SCOPES.join(" "),
}] : [];
const DESKTOP = "knime-mcp-desktop";
const SHORT_LIVED = "knime-mcp-short-lived";
const accessTokenTtlFor = (client) => (client.clientId === SHORT_LIVED ? 2 : accessTokenTtl);

function secret(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`set ${name}`);
    process.exit(2);
  }
  return value;
}

// The client ID metadata document, and a fetch for the provider that reaches it: the provider's own fetch refuses
// loopback addresses (its SSRF guard) and trusts only public certificates.
async function clientMetadataDocument(folder) {
  const cert = readFileSync(join(folder, "cert.pem"));
  const host = https.createServer({ cert, key: readFileSync(join(folder, "key.pem")) });
  await new Promise((resolve) => host.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${host.address().port}/knime-mcp-client.json`;
  const document = JSON.stringify({
    client_id: url,
    client_name: "knime-mcp",
    application_type: "native",
    redirect_uris: ["http://127.0.0.1/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
  host.on("request", (request, response) => {
    response.writeHead(200, { "content-type": "application/json" }).end(document);
  });
  Response; // loads the fetch implementation, which sets the global dispatcher
  const Agent = globalThis[Symbol.for("undici.globalDispatcher.1")].constructor;
  const trusting = new Agent({ connect: { ca: cert } });
  console.log(`client metadata document at ${url}`);
  return (target, options) => fetch(target, { ...options, dispatcher: trusting });
}

const fetchClientMetadata = values["client-metadata-tls"] && (await clientMetadataDocument(values["client-metadata-tls"]));

const server = http.createServer();
server.listen(0, "127.0.0.1", () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: "knime-mcp-ci",
        client_secret: secret("KNIME_MCP_TEST_CLIENT_SECRET"),
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: SCOPES.join(" "),
      },
      ...[DESKTOP, SHORT_LIVED].map((client_id) => ({
        client_id,
        application_type: "native",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        redirect_uris: ["http://127.0.0.1/callback"],
        response_types: ["code"],
        scope: ["offline_access", ...SCOPES].join(" "),
      })),
      {
        client_id: "mcp-resource-server",
        client_secret: secret("KNIME_MCP_TEST_INTROSPECTION_SECRET"),
        grant_types: [],
        redirect_uris: [],
        response_types: [],
      },
      ...jwtClients,
    ],
    scopes: ["openid", "offline_access", ...SCOPES],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      dPoP: dpop,
      clientIdMetadataDocument: { enabled: Boolean(fetchClientMetadata), ack: "draft-02" },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => {
          if (!new URL(resource).host.startsWith("127.0.0.1:")) {
            throw new errors.InvalidTarget();
          }
          return {
            scope: SCOPES.join(" "),
            audience: resource,
            accessTokenTTL: accessTokenTtlFor(client),
            accessTokenFormat: "opaque",
          };
        },
      },
    },
    pkce: { required: () => true },
    // --client-auth-algs: the only algorithms private_key_jwt assertions may be signed with (its metadata lists them)
    ...(values["client-auth-algs"] && {
      enabledJWA: { clientAuthSigningAlgValues: ["HS256", ...values["client-auth-algs"].split(",")] },
    }),
    ...(fetchClientMetadata && { fetch: fetchClientMetadata }),
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: { AccessToken: (ctx, token, client) => accessTokenTtlFor(client), ClientCredentials: accessTokenTtl },
  });
  server.on("request", provider.callback());
  console.log(`oidc-provider listening on ${issuer}`);
});
