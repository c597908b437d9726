-- Single sign-on (issue 35 item 3): the OpenID Connect identity a user
-- signs in with, its issuer and subject (the ID token's "iss" and "sub"),
-- set when the user first signs in by SSO; NULL for users who never did.
-- One identity is one user (NULLs are distinct: local users are many).
ALTER TABLE users ADD COLUMN oidc_issuer TEXT;
ALTER TABLE users ADD COLUMN oidc_subject TEXT;
CREATE UNIQUE INDEX users_oidc ON users (oidc_issuer, oidc_subject);
