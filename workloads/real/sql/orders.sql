-- orders.sql: a small analytics database for coprof's real workloads (run
-- by workloads/real/sqlrun). Generates customers, products and
-- `rows` orders (config.rows, default 100000) with recursive CTEs and a
-- linear congruential generator (deterministic: no random()), indexes
-- them, then runs joins, aggregates, a correlated subquery and window
-- functions. Exercises SQLite's B-trees, sorter, query planner and VDBE.

CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, region TEXT, since INTEGER);
CREATE TABLE products(id INTEGER PRIMARY KEY, code TEXT, price INTEGER, category TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER, qty INTEGER, day INTEGER, status TEXT);

-- lcg(i) gives a pseudo-random 31-bit value for each row number.
INSERT INTO customers
  WITH RECURSIVE c(i, x) AS (SELECT 1, 7 UNION ALL
    SELECT i + 1, (x * 1103515245 + 12345) % 2147483648 FROM c
    WHERE i < (SELECT max(1000, rows / 20) FROM config))
  SELECT i, 'cust' || i,
         CASE x % 5 WHEN 0 THEN 'north' WHEN 1 THEN 'south' WHEN 2 THEN 'east' WHEN 3 THEN 'west' ELSE 'central' END,
         2000 + x % 25
  FROM c;

INSERT INTO products
  WITH RECURSIVE p(i, x) AS (SELECT 1, 99 UNION ALL
    SELECT i + 1, (x * 1103515245 + 12345) % 2147483648 FROM p WHERE i < 500)
  SELECT i, printf('P%04d', x % 10000), 99 + x % 20000,
         CASE x % 4 WHEN 0 THEN 'tools' WHEN 1 THEN 'books' WHEN 2 THEN 'food' ELSE 'toys' END
  FROM p;

INSERT INTO orders
  WITH RECURSIVE o(i, x) AS (SELECT 1, 4242 UNION ALL
    SELECT i + 1, (x * 1103515245 + 12345) % 2147483648 FROM o
    WHERE i < (SELECT rows FROM config))
  SELECT i,
         1 + (x >> 4) % (SELECT count(*) FROM customers),
         -- Skewed product choice: the square makes low ids popular.
         1 + (((x >> 8) % 500) * ((x >> 8) % 500)) / 500,
         1 + x % 20,
         x % 365,
         CASE (x >> 12) % 6 WHEN 3 THEN 'pending' WHEN 4 THEN 'returned' WHEN 5 THEN 'cancelled' ELSE 'shipped' END
  FROM o;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_product_day ON orders(product, day);
CREATE INDEX customers_region ON customers(region);

SELECT 'rows', (SELECT count(*) FROM customers), (SELECT count(*) FROM products), (SELECT count(*) FROM orders);

-- Revenue per region and category (join of three tables, group by).
SELECT c.region, p.category, count(*), sum(o.qty * p.price) / 100
FROM orders o JOIN customers c ON c.id = o.customer JOIN products p ON p.id = o.product
WHERE o.status = 'shipped'
GROUP BY c.region, p.category ORDER BY c.region, p.category;

-- The ten best customers by shipped revenue.
SELECT c.name, c.region, sum(o.qty * p.price) AS revenue
FROM orders o JOIN customers c ON c.id = o.customer JOIN products p ON p.id = o.product
WHERE o.status = 'shipped'
GROUP BY c.id ORDER BY revenue DESC, c.id LIMIT 10;

-- Products ordered more than the average product (correlated subquery
-- answered from the (product, day) index).
SELECT count(*) FROM products p
WHERE (SELECT count(*) FROM orders o WHERE o.product = p.id)
    > (SELECT count(*) FROM orders) / (SELECT count(*) FROM products);

-- Monthly totals with a running sum and rank (window functions).
SELECT month, n, total, sum(total) OVER (ORDER BY month) AS running,
       rank() OVER (ORDER BY total DESC) AS place
FROM (SELECT day / 31 AS month, count(*) AS n, sum(qty) AS total FROM orders GROUP BY month)
ORDER BY month;

-- Return rate per customer cohort, through the customers_region index.
SELECT c.since, round(100.0 * sum(o.status = 'returned') / count(*), 3)
FROM customers c JOIN orders o ON o.customer = c.id
WHERE c.region IN ('north', 'east')
GROUP BY c.since ORDER BY c.since;

-- Updates and deletes through the indexes, then a checksum of what is left.
UPDATE orders SET status = 'shipped' WHERE status = 'pending' AND day < 100;
DELETE FROM orders WHERE status = 'cancelled' AND product % 7 = 0;
SELECT 'checksum', count(*), sum(id * 31 + qty * 7 + day) % 1000000007,
       sum(length(status)) FROM orders;
