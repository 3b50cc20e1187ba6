// Test authorization server: the npm `oidc-provider` (a certified OpenID Connect / OAuth 2 implementation) on
// 127.0.0.1, configured as MCP's authorization specification expects: dynamic client registration (RFC 7591), PKCE
// (S256), resource indicators (RFC 8707), refresh tokens, the client credentials grant and token introspection
// (RFC 7662), with the provider's own login and consent pages (devInteractions) for a scripted user agent.
//
//   node oidc-provider.mjs [--access-token-ttl SECONDS]
//
// Pre-registered clients: `knime-mcp-desktop` (public, native: any loopback port), `knime-mcp-ci` (confidential,
// client credentials) and `mcp-resource-server` (introspection). Secrets come from the environment, never the command
// line: KNIME_MCP_TEST_CLIENT_SECRET for `knime-mcp-ci`, KNIME_MCP_TEST_INTROSPECTION_SECRET for `mcp-resource-server`. Tokens may be asked for any resource on 127.0.0.1.
// Prints `oidc-provider listening on http://127.0.0.1:PORT` once it takes requests.

import http from "node:http";
import { parseArgs } from "node:util";

import Provider, { errors } from "oidc-provider";

const { values } = parseArgs({ options: { "access-token-ttl": { type: "string", default: "3600" } } });
const accessTokenTtl = Number(values["access-token-ttl"]);
const SCOPES = ["mcp:read", "mcp:write"];

function secret(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`set ${name}`);
    process.exit(2);
  }
  return value;
}

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
      {
        client_id: "knime-mcp-desktop",
        application_type: "native",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        redirect_uris: ["http://127.0.0.1/callback"],
        response_types: ["code"],
        scope: ["offline_access", ...SCOPES].join(" "),
      },
      {
        client_id: "mcp-resource-server",
        client_secret: secret("KNIME_MCP_TEST_INTROSPECTION_SECRET"),
        grant_types: [],
        redirect_uris: [],
        response_types: [],
      },
    ],
    scopes: ["openid", "offline_access", ...SCOPES],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => {
          if (!new URL(resource).host.startsWith("127.0.0.1:")) {
            throw new errors.InvalidTarget();
          }
          return { scope: SCOPES.join(" "), audience: resource, accessTokenTTL: accessTokenTtl, accessTokenFormat: "opaque" };
        },
      },
    },
    pkce: { required: () => true },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: { AccessToken: accessTokenTtl, ClientCredentials: accessTokenTtl },
  });
  server.on("request", provider.callback());
  console.log(`oidc-provider listening on ${issuer}`);
});
