"""A small SQLite shop database for the sample agents, created and seeded on the fly.

The seed is fixed, so every fresh database holds the same orders and the sample traces
regenerate byte for byte. Searches go through a ``search_index`` table rather than the
orders themselves, like a real support tool backed by a search service: with
``stale_index=True`` the index was last rebuilt before the newest orders were placed, so
they exist (``get_order`` finds them) but no search ever returns them.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["INDEX_REBUILT", "ORDERS", "Order", "OrderNotFound", "OrdersDb"]


@dataclass(frozen=True)
class Order:
    order_id: str
    customer: str
    email: str
    item: str
    amount_cents: int
    status: str
    placed: str


ORDERS: tuple[Order, ...] = (
    Order("ORD-1011", "Lee Park", "lee.park@example.com", "Trailblazer 2 tent", 18900,
          "delivered", "2026-05-02"),
    Order("ORD-1017", "Priya Raman", "priya.raman@example.com", "Summit 40L backpack", 12900,
          "delivered", "2026-05-19"),
    Order("ORD-1023", "Dana Whitfield", "dana.whitfield@example.com", "Camp mug (set of 2)",
          2400, "delivered", "2026-05-27"),
    Order("ORD-1031", "Tom Becker", "tom.becker@example.com", "Trail runner shoes", 11500,
          "shipped", "2026-06-04"),
    Order("ORD-1042", "Dana Whitfield", "dana.whitfield@example.com", "Trailblazer 2 tent",
          18900, "delivered", "2026-06-11"),
    Order("ORD-1045", "Ana Souza", "ana.souza@example.com", "Down sleeping bag", 24900,
          "delivered", "2026-06-12"),
    Order("ORD-2001", "Sam Okafor", "sam.okafor@example.com", "Standing desk", 64900,
          "returned", "2026-05-08"),
    Order("ORD-2003", "Sam Okafor", "sam.okafor@example.com", "Monitor arm", 8900,
          "returned", "2026-05-08"),
    Order("ORD-2004", "Sam Okafor", "sam.okafor@example.com", "Desk lamp", 3900,
          "delivered", "2026-05-21"),
    Order("ORD-2010", "Mia Chen", "mia.chen@example.com", "Ergonomic chair", 38900,
          "delivered", "2026-05-30"),
)  # fmt: skip

#: Orders placed after this date are missing from a stale search index.
INDEX_REBUILT = "2026-06-10"

_SCHEMA = """
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY, customer TEXT NOT NULL, email TEXT NOT NULL,
    item TEXT NOT NULL, amount_cents INTEGER NOT NULL, status TEXT NOT NULL,
    placed TEXT NOT NULL
);
CREATE TABLE search_index (order_id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE refunds (
    refund_id INTEGER PRIMARY KEY, order_id TEXT NOT NULL, amount_cents INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE outbox (
    message_id INTEGER PRIMARY KEY, to_addr TEXT NOT NULL, subject TEXT NOT NULL,
    body TEXT NOT NULL
);
"""

_WORD = re.compile(r"[a-z0-9@._-]+")


class OrderNotFound(LookupError):
    """No order has the id that was asked for."""


class OrdersDb:
    """The shop's database at ``path`` (created and seeded when missing).

    Args:
        path: The SQLite file; ``None`` makes a fresh one in a new temporary folder.
        stale_index: Leave orders placed after :data:`INDEX_REBUILT` out of the search index.
    """

    def __init__(self, path: str | Path | None = None, *, stale_index: bool = False) -> None:
        if path is None:
            folder = tempfile.mkdtemp(prefix="regista-shop-")
            path = Path(folder) / "shop.sqlite"
            # A shop of our own making goes with the object (or at exit, at the latest).
            weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        self.path = Path(path)
        self.stale_index = stale_index
        if not self.path.exists():
            self._create()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # A connection per operation: tools may be called from any thread.
        conn = sqlite3.connect(self.path, timeout=10)
        conn.row_factory = sqlite3.Row
        try:
            with conn:
                yield conn
        finally:
            conn.close()

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.executescript(_SCHEMA)
            for o in ORDERS:
                conn.execute(
                    "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (o.order_id, o.customer, o.email, o.item, o.amount_cents, o.status, o.placed),
                )
                if self.stale_index and o.placed > INDEX_REBUILT:
                    continue
                body = " ".join((o.order_id, o.customer, o.email, o.item, o.status)).lower()
                conn.execute("INSERT INTO search_index VALUES (?, ?)", (o.order_id, body))

    # -- reads ---------------------------------------------------------------------------

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Orders whose index entry holds every word of ``query``."""
        words = _WORD.findall(query.lower())
        if not words:
            return []
        with self._connect() as conn:
            rows = conn.execute(
                "SELECT o.* FROM search_index s JOIN orders o USING (order_id) ORDER BY o.order_id"
            ).fetchall()
            bodies = dict(conn.execute("SELECT order_id, body FROM search_index").fetchall())
        hits = [r for r in rows if all(w in _WORD.findall(bodies[r["order_id"]]) for w in words)]
        return [_public(r) for r in hits[:limit]]

    def get(self, order_id: str) -> dict[str, Any]:
        """One order with its refunds; raises :class:`OrderNotFound`."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT * FROM orders WHERE order_id = ?", (order_id.strip().upper(),)
            ).fetchone()
            if row is None:
                raise OrderNotFound(f"no order with id {order_id!r}")
            refunded = conn.execute(
                "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = ?",
                (row["order_id"],),
            ).fetchone()[0]
        return {**_public(row), "placed": row["placed"], "refunded": _dollars(refunded)}

    def refunds(self) -> list[dict[str, Any]]:
        with self._connect() as conn:
            rows = conn.execute("SELECT * FROM refunds ORDER BY refund_id").fetchall()
        return [dict(r) for r in rows]

    def outbox(self) -> list[dict[str, Any]]:
        with self._connect() as conn:
            rows = conn.execute("SELECT * FROM outbox ORDER BY message_id").fetchall()
        return [dict(r) for r in rows]

    # -- writes --------------------------------------------------------------------------

    def refund(self, order_id: str, amount: float, reason: str) -> dict[str, Any]:
        """Record a refund; raises ``ValueError`` when the order cannot take it."""
        order = self.get(order_id)
        cents = round(amount * 100)
        if cents <= 0:
            raise ValueError("a refund must be a positive amount")
        left = round(order["amount"] * 100) - round(order["refunded"] * 100)
        if cents > left:
            raise ValueError(f"{order['order_id']} has only ${_dollars(left):.2f} left to refund")
        if order["status"] not in ("delivered", "returned"):
            raise ValueError(f"{order['order_id']} is {order['status']}, not delivered yet")
        with self._connect() as conn:
            cur = conn.execute(
                "INSERT INTO refunds (order_id, amount_cents, reason) VALUES (?, ?, ?)",
                (order["order_id"], cents, reason),
            )
            status = "refunded" if cents == left else "partially refunded"
            conn.execute(
                "UPDATE orders SET status = ? WHERE order_id = ?", (status, order["order_id"])
            )
        return {
            "refund_id": f"RF-{cur.lastrowid:04d}",
            "order_id": order["order_id"],
            "amount": _dollars(cents),
            "status": status,
        }

    def send(self, to: str, subject: str, body: str) -> dict[str, Any]:
        """Queue an email in the local outbox (nothing leaves the machine)."""
        if "@" not in to:
            raise ValueError(f"{to!r} is not an email address")
        with self._connect() as conn:
            cur = conn.execute(
                "INSERT INTO outbox (to_addr, subject, body) VALUES (?, ?, ?)", (to, subject, body)
            )
        return {"message_id": f"MSG-{cur.lastrowid:04d}", "to": to, "status": "queued"}


def _dollars(cents: int) -> float:
    return round(cents / 100, 2)


def _public(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "order_id": row["order_id"],
        "customer": row["customer"],
        "email": row["email"],
        "item": row["item"],
        "amount": _dollars(row["amount_cents"]),
        "status": row["status"],
    }
