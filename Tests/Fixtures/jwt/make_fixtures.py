#!/usr/bin/env python3
"""Regenerates the JWT interop fixtures in this folder.

Run with the project venv (PyJWT, cryptography and vonage-jwt installed):

    /work/main/.venv/bin/python Tests/Fixtures/jwt/make_fixtures.py

Keys are freshly generated each run, so every output changes; commit them together.
Expiry is 2100-01-01 so the tokens stay valid for the life of the test suite.
"""
import base64
import json
import pathlib

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from vonage_jwt import JwtClient

HERE = pathlib.Path(__file__).resolve().parent
EXP_2100 = 4102444800
IAT = 1700000000


def b64url_uint(s: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)), "big")


def write(name: str, data) -> None:
    if isinstance(data, str):
        data = data.encode()
    (HERE / name).write_bytes(data)
    print("wrote", name)


def pem_private(key, fmt) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption())


def pem_public(key, fmt) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, fmt)


# RFC 7515 appendix A.2: the published RSA public key (JWK n, e) as SPKI PEM.
A2_TOKEN = (
    "eyJhbGciOiJSUzI1NiJ9"
    ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    ".cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdb"
    "F9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383L"
    "cOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlV"
    "mtVrBp0igcN_IoypGlUPQGe77Rw"
)
A2_N = (
    "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS"
    "-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2"
    "CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9g"
    "b54h4FRWyuXpoQ"
)
a2_public = rsa.RSAPublicNumbers(b64url_uint("AQAB"), b64url_uint(A2_N)).public_key()
# Sanity check: the published token must verify under the published key.
jwt.decode(A2_TOKEN, a2_public, algorithms=["RS256"], options={"verify_exp": False})
write("rfc7515_a2_public.pem",
      a2_public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
write("rfc7515_a2.jwt", A2_TOKEN + "\n")

# PyJWT RS256 with a fresh key, in every PEM form our loader accepts.
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
write("pyjwt_private_pkcs8.pem", pem_private(key, serialization.PrivateFormat.PKCS8))
write("pyjwt_private_pkcs1.pem", pem_private(key, serialization.PrivateFormat.TraditionalOpenSSL))
write("pyjwt_public.pem", pem_public(key, serialization.PublicFormat.SubjectPublicKeyInfo))
write("pyjwt_public_pkcs1.pem", pem_public(key, serialization.PublicFormat.PKCS1))
claims = {"iss": "pyjwt", "sub": "interop", "iat": IAT, "nbf": IAT, "exp": EXP_2100, "n": 1.5, "ok": True}
write("pyjwt_rs256.jwt", jwt.encode(claims, key, algorithm="RS256", headers={"kid": "interop-1"}) + "\n")

# PyJWT HS256 with a shared secret.
secret = "interop-hs256-secret-0123456789abcdef"
write("pyjwt_hs256.secret", secret)
write("pyjwt_hs256.jwt", jwt.encode({"sub": "hs", "iat": IAT, "exp": EXP_2100}, secret, algorithm="HS256") + "\n")

# vonage-jwt application token, as the official SDKs send it.
vkey = rsa.generate_private_key(public_exponent=65537, key_size=2048)
vpem = pem_private(vkey, serialization.PrivateFormat.PKCS8).decode()
write("vonage_private.pem", vpem)
write("vonage_public.pem", pem_public(vkey, serialization.PublicFormat.SubjectPublicKeyInfo))
app_id = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
vtoken = JwtClient(app_id, vpem).generate_application_jwt({
    "iat": IAT,
    "exp": EXP_2100,
    "sub": "alice",
    "acl": {"paths": {"/*/users/**": {}, "/*/conversations/**": {}}},
}).decode()
write("vonage.jwt", vtoken + "\n")
write("vonage.json", json.dumps({"application_id": app_id}, indent=2) + "\n")
