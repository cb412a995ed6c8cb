

def test_the_change_stamp_moves_with_every_write_and_only_then(tmp_path):
    import sqlite3
    import threading

    from workbench import Project

    project = Project.create(tmp_path / "p.palimpsest")
    try:
        with project.db.transaction():
            project.db.execute("CREATE TABLE scratch (x TEXT)")
        first = project.change_stamp()
        project.db.execute("SELECT COUNT(*) FROM scratch").fetchone()  # a read changes nothing
        assert project.change_stamp() == first
        with project.db.transaction():  # a write on this thread's connection
            project.db.execute("INSERT INTO scratch VALUES ('A')")
        second = project.change_stamp()
        assert second != first

        def write_elsewhere():  # a worker thread's connection
            with project.db.transaction():
                project.db.execute("INSERT INTO scratch VALUES ('B')")
            project.release_thread_connection()

        worker = threading.Thread(target=write_elsewhere)
        worker.start()
        worker.join()
        third = project.change_stamp()
        assert third != second
        other = sqlite3.connect(project.path)  # another program
        other.execute("UPDATE scratch SET x = 'C' WHERE x = 'B'")
        other.commit()
        other.close()
        assert project.change_stamp() != third
        assert project.change_stamp() == project.change_stamp()
    finally:
        project.close()
