"""Creates the store's tables and seeds them, untraced (run before gunicorn
starts, without the OpenTelemetry SDK): 100 customers, 300 orders, 5 settings."""
import os

from sqlalchemy import create_engine, func, select
from sqlalchemy.orm import Session

from models import Base, Customer, Order, Setting, seed_rows

engine = create_engine(os.environ["DATABASE_URL"])
Base.metadata.drop_all(engine)
Base.metadata.create_all(engine)
customers, orders, settings = seed_rows()
with Session(engine) as session:
    session.add_all(customers)
    session.flush()
    session.add_all(orders + settings)
    session.commit()
    counts = [session.scalar(select(func.count()).select_from(m)) for m in (Customer, Order, Setting)]
print("seeded: %d customers, %d orders, %d settings" % tuple(counts))
