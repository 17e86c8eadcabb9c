"""The store's tables, as SQLAlchemy 2 declarative models.

customers (100 rows), orders (300 rows; order i belongs to customer
(i*7 % 100) + 1, so any 30 consecutive orders have 30 different customers)
and settings (a few key/value rows). Order.customer is a plain many-to-one
relationship with SQLAlchemy's default lazy="select": reading it on an order
whose customer is not yet in the session's identity map runs one SELECT by
primary key.
"""
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from sqlalchemy import ForeignKey, Numeric, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    email: Mapped[str] = mapped_column(String(200))


class Order(Base):
    __tablename__ = "orders"
    id: Mapped[int] = mapped_column(primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"), index=True)
    total: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    created_at: Mapped[datetime]
    customer: Mapped[Customer] = relationship()


class Setting(Base):
    __tablename__ = "settings"
    key: Mapped[str] = mapped_column(String(50), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


CUSTOMERS = 100
ORDERS = 300
SETTINGS = {"currency": "EUR", "country": "NL", "tax_rate": "0.21", "page_size": "30", "shop_name": "corpus store"}


def seed_rows():
    """Every row of the seed, customers first (the foreign keys)."""
    customers = [Customer(id=c, name=f"Customer {c}", email=f"customer{c}@example.com") for c in range(1, CUSTOMERS + 1)]
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc).replace(tzinfo=None)
    orders = [
        Order(id=i, customer_id=(i * 7 % CUSTOMERS) + 1, total=Decimal(10 + (i * 37 % 500)) + Decimal("0.99"),
              created_at=t0 + timedelta(hours=i))
        for i in range(1, ORDERS + 1)
    ]
    settings = [Setting(key=k, value=v) for k, v in SETTINGS.items()]
    return customers, orders, settings
