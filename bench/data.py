"""The benchmark value: 28,000 seeded records (exact, checked by SHA-256) and its schema in the subset."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

SEED: Final = 20240607
RECORDS: Final = 28_000
SHA256: Final = "d423f484da49e1eeece182faad9d8617789e53fa950f9c022d6476db81f50c94"

FIRST = ["Zoë", "José", "Łukasz", "Søren", "Chloé", "Björk", "Ñuñez", "Ærin", "Олег", "Анна", "李雷", "王芳"]
FIRST += ["さくら", "Παύλος", "Δήμητρα", "Amélie"]
LAST = ["Müller", "García", "Kowalski", "Ødegård", "Dupont", "Иванов", "山田", "Παπαδόπουλος", "Smith", "Nguyễn"]
LAST += ["Østergaard", "Šimůnek"]
DOMAINS = ["example.org", "mail.test", "exämple.net", "corp.local"]
STATUS = ["active", "pending", "suspended", "closed"]
TAGS = ["alpha", "beta", "gamma", "δέλτα", "エプシロン", "zeta-\U0001f680", "eta", "θ"]
STREETS = ["Elm Street", "Hauptstraße", "Rue de la Paix", "Calle Mayor", "Nevsky Prospekt", "銀座通り"]
CITIES = ["Zürich", "São Paulo", "Kraków", "Москва", "東京", "Αθήνα", "Reykjavík", "New York"]
COUNTRIES = ["CH", "BR", "PL", "RU", "JP", "GR", "IS", "US"]
NOTES = [
    "call before delivery",
    "fragile \u2014 handle with care",
    "leave at door",
    "\u2191 priority",
    "备注：周末送货",
]


def generate(records: int = RECORDS, seed: int = SEED) -> list[dict[str, Any]]:
    """The benchmark value (``records`` records; the exact value for the default count)."""
    state = seed

    def draw(bound: int) -> int:
        nonlocal state
        state = (state * 48271) % 2147483647
        return state % bound

    value: list[dict[str, Any]] = []
    for i in range(records):
        name = FIRST[draw(16)] + " " + LAST[draw(12)]
        email = f"user{i}@{DOMAINS[draw(4)]}"
        active = draw(2) == 1
        status = STATUS[draw(4)]
        tier = 1 + draw(3)
        score = (draw(1_000_000) + 0.5) / 1000
        tags = [TAGS[draw(8)] for _ in range(draw(3))]
        street = f"{1 + draw(9999)} {STREETS[draw(6)]}"
        city = CITIES[draw(8)]
        zip_code = f"{draw(100_000):05d}"
        country = COUNTRIES[draw(8)]
        lat = (draw(1_800_000) - 900_000 + 0.5) / 10_000
        lon = (draw(3_600_000) - 1_800_000 + 0.5) / 10_000
        orders = []
        for j in range(draw(3)):
            sku = f"SKU-{draw(100_000):05d}"
            qty = 1 + draw(20)
            unit_price = (draw(100_000) + 0.5) / 100
            orders.append({"order_id": 10 * i + j, "sku": sku, "qty": qty, "unit_price": unit_price, "currency": "EUR"})
        note = NOTES[draw(5)] if draw(3) == 0 else None
        value.append(
            {
                "id": i,
                "name": name,
                "email": email,
                "active": active,
                "status": status,
                "tier": tier,
                "score": score,
                "tags": tags,
                "address": {
                    "street": street,
                    "city": city,
                    "zip": zip_code,
                    "country": country,
                    "geo": {"lat": lat, "lon": lon},
                },
                "orders": orders,
                "note": note,
            }
        )
    return value


def sha256_of(value: Any) -> str:
    """SHA-256 of the compact JSON text (non-ASCII raw), as bench-data.md defines it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _string(enum: list[str] | None = None) -> dict[str, Any]:
    return {"type": "string", "enum": enum} if enum else {"type": "string"}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "properties": properties, "required": list(properties)}


def schema() -> dict[str, Any]:
    """The value's schema in the contract's raw subset (also valid Draft 2020-12 and draft-07)."""
    order = _object(
        {
            "order_id": {"type": "integer"},
            "sku": _string(),
            "qty": {"type": "integer"},
            "unit_price": {"type": "number"},
            "currency": {"type": "string", "const": "EUR"},
        }
    )
    address = _object(
        {
            "street": _string(),
            "city": _string(),
            "zip": _string(),
            "country": _string(COUNTRIES),
            "geo": _object({"lat": {"type": "number"}, "lon": {"type": "number"}}),
        }
    )
    record = _object(
        {
            "id": {"type": "integer"},
            "name": _string(),
            "email": _string(),
            "active": {"type": "boolean"},
            "status": _string(STATUS),
            "tier": {"type": "integer", "enum": [1, 2, 3]},
            "score": {"type": "number"},
            "tags": {"type": "array", "items": _string(TAGS)},
            "address": address,
            "orders": {"type": "array", "items": order},
            "note": {"oneOf": [{"type": "string"}, {"type": "null"}]},
        }
    )
    return {"type": "array", "items": record}
