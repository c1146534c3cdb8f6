-- text.sql: string-heavy SQL for coprof's real workloads (run by
-- workloads/real/sqlrun). Builds `rows` (config.rows) synthetic sentences
-- from a word list with a recursive CTE, then splits them into words with
-- another recursive CTE, counts word frequencies with GROUP BY, searches
-- with LIKE and GLOB, and sorts text. Exercises SQLite's string functions,
-- collation, temporary B-trees and the sorter.

CREATE TABLE words(id INTEGER PRIMARY KEY, w TEXT);
INSERT INTO words(id, w) VALUES
  (0,'the'),(1,'of'),(2,'and'),(3,'profile'),(4,'loop'),(5,'cache'),(6,'value'),(7,'branch'),
  (8,'sample'),(9,'range'),(10,'counter'),(11,'hot'),(12,'cold'),(13,'load'),(14,'store'),(15,'program'),
  (16,'a'),(17,'to'),(18,'in'),(19,'instruction'),(20,'memory'),(21,'random'),(22,'tree'),(23,'node');

CREATE TABLE docs(id INTEGER PRIMARY KEY, body TEXT);
INSERT INTO docs
  WITH RECURSIVE d(i, x) AS (SELECT 1, 17 UNION ALL
    SELECT i + 1, (x * 1103515245 + 12345) % 2147483648 FROM d
    WHERE i < (SELECT max(100, rows / 10) FROM config))
  SELECT i,
    (SELECT w FROM words WHERE id = x % 24) || ' ' ||
    (SELECT w FROM words WHERE id = (x >> 5) % 24) || ' ' ||
    (SELECT w FROM words WHERE id = ((x >> 10) % 24) * ((x >> 10) % 24) / 24) || ' ' ||
    (SELECT w FROM words WHERE id = (x >> 15) % 24) || ' ' ||
    (SELECT w FROM words WHERE id = ((x >> 20) % 24) * ((x >> 20) % 24) / 24) || ' ' ||
    (SELECT w FROM words WHERE id = (x >> 25) % 24)
  FROM d;

-- Split every document into words.
CREATE TABLE tokens AS
  WITH RECURSIVE s(doc, word, rest) AS (
    SELECT id, '', body || ' ' FROM docs
    UNION ALL
    SELECT doc, substr(rest, 1, instr(rest, ' ') - 1), substr(rest, instr(rest, ' ') + 1)
    FROM s WHERE rest <> '')
  SELECT doc, word FROM s WHERE word <> '';

SELECT 'documents', count(*), sum(length(body)) FROM docs;
SELECT 'tokens', count(*) FROM tokens;
SELECT word, count(*) AS n FROM tokens GROUP BY word ORDER BY n DESC, word LIMIT 12;
SELECT 'like', count(*) FROM docs WHERE body LIKE '%hot loop%';
SELECT 'glob', count(*) FROM docs WHERE body GLOB '*cache*value*';
SELECT 'upper', count(DISTINCT upper(substr(body, 1, 12))) FROM docs;
SELECT 'replace', sum(length(replace(body, 'the', 'THE THE'))) FROM docs;
SELECT body FROM docs ORDER BY body DESC, id LIMIT 3;
SELECT 'checksum', sum(unicode(word) * length(word) + doc % 97) % 1000000007 FROM tokens;
