"""store: the Flask + SQLAlchemy 2 application of the python-flask corpus cases.

Every request opens its own Session (the engine's connection pool, psycopg2
on PostgreSQL) and closes it at the end. The OpenTelemetry SDK and the
Flask and SQLAlchemy instrumentations are set up by tracing.py in each
gunicorn worker before this module is imported (gunicorn.conf.py's
post_fork), so the Flask class and create_engine used here are the
instrumented ones.

  GET /orders/nplus1        a page of 30 orders, then order.customer.name for
                            each: a lazy many-to-one, one SELECT per order
                            (30 different customer ids)
  GET /orders/joined        the same page with selectinload(Order.customer):
                            2 statements
  GET /orders/same-setting  the same page, then for each order the currency
                            setting read again with session.execute(select(...)):
                            the same statement with the same value 30 times
  GET /orders/setting-once  the setting read once before the loop
  GET /dashboard/chatty     6 figures, 6 different statements one after another
  GET /dashboard/one-query  the same 6 figures from one statement (scalar subqueries)
  GET /health               no database
"""
import os
import random

from flask import Flask, jsonify
from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session, selectinload

from models import Customer, Order, Setting

PAGE = 30
PAGES = 10  # 300 orders

engine = create_engine(os.environ["DATABASE_URL"])
app = Flask(__name__)


def order_page(session, *options):
    """One of the 10 pages of 30 orders, at random, by id."""
    p = random.randrange(PAGES)
    q = select(Order).order_by(Order.id).limit(PAGE).offset(PAGE * p)
    return session.scalars(q.options(*options)).all()


def currency(session):
    return session.execute(select(Setting.value).where(Setting.key == "currency")).scalar_one()


def line(order, customer_name, cur):
    return {"id": order.id, "customer": customer_name, "total": str(order.total), "currency": cur}


@app.get("/health")
def health():
    return "ok"


@app.get("/orders/nplus1")
def orders_nplus1():
    with Session(engine) as session:
        orders = order_page(session)
        # order.customer is lazy="select": each access loads that one customer.
        return jsonify([line(o, o.customer.name, None) for o in orders])


@app.get("/orders/joined")
def orders_joined():
    with Session(engine) as session:
        orders = order_page(session, selectinload(Order.customer))
        return jsonify([line(o, o.customer.name, None) for o in orders])


@app.get("/orders/same-setting")
def orders_same_setting():
    with Session(engine) as session:
        orders = order_page(session)
        out = []
        for o in orders:
            # A select() always goes to the database: the identity map only
            # short-circuits session.get() and lazy loads by primary key.
            out.append(line(o, o.customer_id, currency(session)))
        return jsonify(out)


@app.get("/orders/setting-once")
def orders_setting_once():
    with Session(engine) as session:
        orders = order_page(session)
        cur = currency(session)
        return jsonify([line(o, o.customer_id, cur) for o in orders])


@app.get("/dashboard/chatty")
def dashboard_chatty():
    with Session(engine) as session:
        customers = session.scalar(select(func.count(Customer.id)))
        orders = session.scalar(select(func.count(Order.id)))
        revenue = session.scalar(select(func.sum(Order.total)))
        newest = session.scalars(select(Order).order_by(Order.created_at.desc()).limit(1)).first()
        largest = session.scalars(select(Order).order_by(Order.total.desc(), Order.id).limit(1)).first()
        settings = session.scalar(select(func.count()).select_from(Setting))
        return jsonify(figures(customers, orders, revenue, newest.id, largest.id, settings))


@app.get("/dashboard/one-query")
def dashboard_one_query():
    with Session(engine) as session:
        q = select(
            select(func.count(Customer.id)).scalar_subquery(),
            select(func.count(Order.id)).scalar_subquery(),
            select(func.sum(Order.total)).scalar_subquery(),
            select(Order.id).order_by(Order.created_at.desc()).limit(1).scalar_subquery(),
            select(Order.id).order_by(Order.total.desc(), Order.id).limit(1).scalar_subquery(),
            select(func.count()).select_from(Setting).scalar_subquery(),
        )
        return jsonify(figures(*session.execute(q).one()))


def figures(customers, orders, revenue, newest_id, largest_id, settings):
    return {"customers": customers, "orders": orders, "revenue": str(revenue),
            "newest_order": newest_id, "largest_order": largest_id, "settings": settings}
