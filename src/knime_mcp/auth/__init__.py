"""OAuth sign-in for MCP servers (the MCP authorization specification), on the SDK's own OAuth client."""

from knime_mcp.auth.oauth import (
    DYNAMIC_CLIENT,
    Grant,
    OAuthClient,
    ServerOAuth,
    oauth_auth,
    oauth_client,
    spec_token_store,
    token_store,
)
from knime_mcp.auth.signin import SIGN_IN_SECONDS, BrowserSignIn, LinkOnly, connect_deadline
from knime_mcp.auth.store import OAUTH_DIR_ENV, TokenStore, forget_server, oauth_dir

__all__ = [
    "DYNAMIC_CLIENT",
    "OAUTH_DIR_ENV",
    "SIGN_IN_SECONDS",
    "BrowserSignIn",
    "Grant",
    "LinkOnly",
    "OAuthClient",
    "ServerOAuth",
    "TokenStore",
    "connect_deadline",
    "forget_server",
    "oauth_auth",
    "oauth_client",
    "oauth_dir",
    "spec_token_store",
    "token_store",
]
