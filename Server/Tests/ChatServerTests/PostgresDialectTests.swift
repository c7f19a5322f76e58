import Testing

@testable import ChatServer

/// The store's portable SQL as PostgreSQL reads it (`PostgresDialect.translate`).
@Suite struct PostgresDialectTests {
    @Test func parametersBecomeNumbered() {
        #expect(PostgresDialect.translate("SELECT ? , ?") == "SELECT $1 , $2")
        #expect(PostgresDialect.translate("WHERE a = ?2 OR b = ?1 OR c = ?2") == "WHERE a = $2 OR b = $1 OR c = $2")
    }

    @Test func sqliteFunctionsBecomeTheirPostgresTwins() {
        #expect(
            PostgresDialect.translate("SELECT value FROM json_each(?)")
                == "SELECT value FROM json_array_elements_text(($1)::json)")
        #expect(
            PostgresDialect.translate("SET id = last_insert_rowid(), n = greatest(n, last_insert_rowid())")
                == "SET id = lastval(), n = greatest(n, lastval())")
        #expect(PostgresDialect.translate("WHERE name LIKE ?") == "WHERE name ILIKE $1")
    }

    @Test func quotedTextAndLongerNamesAreLeftAlone() {
        #expect(
            PostgresDialect.translate("SELECT '?', 'json_each(x)' FROM t WHERE my_last_insert_rowid() = ?")
                == "SELECT '?', 'json_each(x)' FROM t WHERE my_last_insert_rowid() = $1")
        #expect(PostgresDialect.translate("WHERE a NOT_LIKE b") == "WHERE a NOT_LIKE b")
    }
}
