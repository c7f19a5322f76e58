#!/usr/bin/env python3
"""The operator console in a real browser (Debian's chromium, headless, driven by Selenium)
against a real chatd on a loopback port, with the `chat` CLI as the SDK client that must see
what the operator does: its socket closing when its tokens are revoked, a message deleted for
everyone. A screenshot of each screen goes to SCREENSHOTS (not committed).

    console_test.py CHATD CHAT SCREENSHOTS           # starts chatd (embedded SQLite)
    console_test.py URL CHAT SCREENSHOTS NODES       # a cluster of NODES behind a proxy at URL,
                                                      # its admin key in CHATD_ADMIN_KEY
"""
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

CHATD, CHAT, SCREENSHOTS = sys.argv[1:4] if len(sys.argv) >= 4 else (None, None, None)
CLUSTER_NODES = int(sys.argv[4]) if len(sys.argv) >= 5 else 0
ADMIN_KEY = os.environ.get("CHATD_ADMIN_KEY", "console-test-admin-key-of-at-least-32-bytes")
HOSTILE = '<img src=x onerror="window.pwned=1">'
WAIT = 20


class Chatd:
    """chatd on a free loopback port with a throwaway data directory."""

    def __init__(self):
        self.process = None
        if CLUSTER_NODES:
            self.url = CHATD
            return
        self.directory = tempfile.mkdtemp(prefix="console-test-")
        self.process = subprocess.Popen(
            [CHATD, "--data", os.path.join(self.directory, "data"), "--port", "0", "--admin-key", ADMIN_KEY,
             "--stop-on-stdin-eof", "--heartbeat", "1", "--write-rate", "0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in self.process.stdout:
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                self.url = found.group(1)
                break
        else:
            raise RuntimeError("chatd did not start")
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def request(self, method, path, body=None, token=None, admin=True):
        headers = {"Content-Type": "application/json"}
        if admin:
            headers["X-Admin-Key"] = ADMIN_KEY
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, response.headers, json.loads(raw) if raw.startswith(b"{") or raw.startswith(b"[") else raw
        except urllib.error.HTTPError as error:
            return error.code, error.headers, json.loads(error.read() or b"{}")

    def user(self, uid, name=None):
        status, _, _ = self.request("POST", "/v1/admin/users", {"uid": uid, "name": name or uid})
        assert status == 201, status
        return self.token(uid)

    def token(self, uid):
        return self.request("POST", f"/v1/admin/users/{uid}/tokens", {})[2]["authToken"]

    def send(self, token, receiver, text):
        status, _, body = self.request(
            "POST", "/v1/messages", {"muid": os.urandom(8).hex(), "receiver": receiver, "receiverType": "user", "category": "message",
             "type": "text", "text": text},
            token=token, admin=False)
        assert status in (200, 201), (status, body)
        return body

    def stop(self):
        if self.process:
            self.process.stdin.close()
            self.process.wait(timeout=30)
            shutil.rmtree(self.directory, ignore_errors=True)


class Listener:
    """`chat --json listen` as a user: the SDK's events, one JSON object a line."""

    def __init__(self, chatd, uid, token):
        self.data = tempfile.mkdtemp(prefix=f"chat-{uid}-")
        common = [CHAT, "--server", chatd.url, "--as", uid, "--data", self.data, "--json"]
        subprocess.run(common + ["login", "--token", token], check=True, capture_output=True, timeout=60)
        self.process = subprocess.Popen(common + ["listen"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.events = queue.Queue()
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.process.stdout:
            try:
                self.events.put(json.loads(line))
            except ValueError:
                pass

    def wait_for(self, name, where=lambda event: True, seconds=WAIT):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                event = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if event.get("event") == name and where(event):
                return event
        raise AssertionError(f"the SDK client never reported {name}")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.data, ignore_errors=True)


class ConsoleTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.chatd = Chatd()
        options = webdriver.ChromeOptions()
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        cls.browser = webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"),
                                       options=options)
        cls.wait = WebDriverWait(cls.browser, WAIT)
        os.makedirs(SCREENSHOTS, exist_ok=True)

    @classmethod
    def tearDownClass(cls):
        cls.browser.quit()
        cls.chatd.stop()

    # Helpers

    def screenshot(self, name):
        prefix = "cluster-" if CLUSTER_NODES else ""
        self.browser.save_screenshot(os.path.join(SCREENSHOTS, f"{prefix}{name}.png"))

    def find(self, selector):
        return self.wait.until(EC.visibility_of_element_located((By.CSS_SELECTOR, selector)))

    def type(self, selector, text):
        field = self.find(selector)
        field.clear()
        field.send_keys(text)

    def click(self, selector):
        self.wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, selector))).click()

    def accept(self):
        self.wait.until(EC.alert_is_present()).accept()

    def toast(self, text):
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "toast"), text))

    early_errors = []

    def console_errors(self):
        return self.early_errors + [entry for entry in self.browser.get_log("browser") if entry["level"] == "SEVERE"]

    def sign_in(self):
        self.browser.get(self.chatd.url + "/admin/")
        self.type("#admin-key", ADMIN_KEY + Keys.ENTER)
        self.find("#nav")

    def go(self, screen):
        self.browser.get(f"{self.chatd.url}/admin/#{screen}")
        self.find(f"#{screen}")

    # Tests, in order (the browser keeps its tab between them).

    def test_1_the_page_is_served_with_a_strict_policy(self):
        status, headers, body = self.chatd.request("GET", "/admin/", admin=False)
        self.assertEqual(status, 200)
        policy = headers["Content-Security-Policy"]
        self.assertIn("script-src 'self'", policy)
        self.assertIn("frame-ancestors 'none'", policy)
        self.assertNotIn("unsafe-inline", policy)
        self.assertEqual(headers["X-Content-Type-Options"], "nosniff")
        self.assertNotIn(b"<script>", body, "no inline script")
        self.assertNotRegex(body.decode(), r"(src|href)=\"https?://", "nothing from elsewhere")
        self.assertEqual(self.chatd.request("GET", "/v1/admin/users", admin=False)[0], 401)

    def test_2_a_wrong_key_is_refused_and_nothing_loads(self):
        self.browser.get(self.chatd.url + "/admin/")
        self.type("#admin-key", "not-the-key" + Keys.ENTER)
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "sign-in-error"), "refused that admin key"))
        self.assertFalse(self.browser.find_element(By.ID, "nav").is_displayed())
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, "#user-table tbody tr"), [])
        self.assertIsNone(self.browser.execute_script("return sessionStorage.getItem('chatd-admin-key')"))
        self.screenshot("1-sign-in-refused")
        # The browser logs the refused request's 401 (expected); anything else is kept for the last test.
        refused = lambda entry: "/v1/admin/audit" in entry["message"] and "401" in entry["message"]
        logged = []
        WebDriverWait(self.browser, WAIT).until(
            lambda _: any(refused(entry) for entry in logged + self.browser.get_log("browser") if logged.append(entry) is None))
        ConsoleTests.early_errors = [e for e in logged if e["level"] == "SEVERE" and not refused(e)]

    def test_3_users_are_created_and_a_hostile_name_shows_as_text(self):
        self.chatd.user("hostile", HOSTILE)
        self.sign_in()
        self.assertNotIn(ADMIN_KEY, self.browser.current_url)
        self.assertEqual(self.browser.get_cookies(), [])
        self.click("#users details summary")
        self.type("#new-user-uid", "dora")
        self.type("#new-user-name", "Dora Explorer")
        self.click("#user-create-form button")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "user-detail-title"), "Dora Explorer (dora)"))
        self.type("#user-search", "hostile" + Keys.ENTER)
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "user-table"), HOSTILE))
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, "#user-table img"), [])
        self.assertIsNone(self.browser.execute_script("return window.pwned ?? null"))
        self.click("button[aria-label='Open user hostile']")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "user-detail-title"), HOSTILE))
        self.assertEqual(self.browser.find_elements(By.CSS_SELECTOR, "main img"), [])
        self.screenshot("2-users")

    def test_4_a_token_is_issued_then_revoked_and_the_sdk_socket_closes(self):
        self.type("#user-search", "dora" + Keys.ENTER)
        self.click("button[aria-label='Open user dora']")
        self.click("#issue-token")
        token = self.wait.until(lambda _: self.find("#issued-token").get_attribute("value"))
        self.assertEqual(len(token), 64)
        self.screenshot("3-token-issued")
        listener = Listener(self.chatd, "dora", token)
        try:
            listener.wait_for("connected")
            self.click("#revoke-tokens")
            self.accept()
            self.toast("Revoked 1 token(s) of dora")
            listener.wait_for("disconnected")
        finally:
            listener.stop()
        self.assertEqual(self.chatd.request("GET", "/v1/me", token=token, admin=False)[0], 401)
        self.click("#suspend-user")
        self.accept()
        self.toast("Suspended dora")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "user-facts"), "since"))
        self.assertEqual(self.chatd.request("POST", "/v1/admin/users/dora/tokens", {})[0], 403)
        self.click("#unsuspend-user")
        self.toast("Lifted the suspension of dora")
        self.assertEqual(self.chatd.request("POST", "/v1/admin/users/dora/tokens", {})[0], 201)

    def test_5_a_group_is_created_filled_in_bulk_and_members_are_kicked_and_banned(self):
        uids = [f"member{n:03}" for n in range(500)]
        for uid in uids:
            assert self.chatd.request("POST", "/v1/admin/users", {"uid": uid})[0] == 201
        self.go("groups")
        self.click("#groups details summary")
        self.type("#new-group-guid", "crew")
        self.type("#new-group-name", "The crew")
        Select(self.find("#new-group-type")).select_by_value("private")
        self.type("#new-group-owner", "dora")
        self.click("#group-create-form button")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "group-detail-title"), "The crew (crew)"))
        self.browser.execute_script("document.querySelector('#bulk-uids').value = arguments[0]",
                                    "\n".join(uids[:250]) + "\n" + ", ".join(uids[250:]) + ", ghost")
        self.click("#bulk-add-form button")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "bulk-result"), "500 added, 0 already members, 1 failed"))
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "group-facts"), "501"))
        self.screenshot("4-group-bulk-added")
        self.click("button[aria-label='Kick member000']")
        self.accept()
        self.toast("Kicked member000")
        self.wait.until(EC.invisibility_of_element_located((By.CSS_SELECTOR, "button[aria-label='Kick member000']")))
        self.click("button[aria-label='Ban member001']")
        self.accept()
        self.toast("Banned member001")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "ban-list"), "member001"))
        members = self.chatd.request("GET", "/v1/admin/groups/crew")[2]["membersCount"]
        self.assertEqual(members, 499)
        self.screenshot("5-group-kick-and-ban")

    def test_5b_scopes_unbans_ownership_and_deletion(self):
        Select(self.find("select[aria-label='Scope of member002']")).select_by_value("moderator")
        self.toast("member002 is moderator now")
        self.click("button[aria-label='Unban member001']")
        self.toast("Unbanned member001")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "ban-list"), "No one is banned"))
        self.type("#transfer-uid", "member002")
        self.click("#transfer-form button")
        self.toast("member002 owns crew now")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "group-facts"), "member002"))
        members = self.chatd.request("GET", "/v1/admin/groups/crew/members?limit=100")[2]["items"]
        scopes = {member["user"]["uid"]: member["scope"] for member in members}
        self.assertEqual((scopes["member002"], scopes["dora"]), ("owner", "admin"))
        self.assertEqual(self.chatd.request("GET", "/v1/admin/groups/crew/bans")[2]["items"], [])

        created = self.chatd.request(
            "POST", "/v1/admin/groups", {"owner": "dora", "group": {"guid": "doomed", "name": "Doomed", "type": "public"}})
        self.assertEqual(created[0], 201)
        self.type("#group-search", "doomed" + Keys.ENTER)
        self.click("button[aria-label='Open group doomed']")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "group-detail-title"), "Doomed (doomed)"))
        self.click("#delete-group")
        self.accept()
        self.toast("Deleted doomed")
        self.assertEqual(self.chatd.request("GET", "/v1/admin/groups/doomed")[0], 404)

    def test_6_a_message_deleted_for_everyone_reaches_the_sdk(self):
        erin = self.chatd.user("erin")
        finn = self.chatd.user("finn")
        self.chatd.send(erin, "finn", "hello finn")
        spam = self.chatd.send(erin, "finn", "buy cheap watches")
        listener = Listener(self.chatd, "finn", finn)
        try:
            listener.wait_for("connected")
            self.go("moderation")
            self.type("#conversation-a", "erin")
            self.type("#conversation-b", "finn")
            self.click("#conversation-form button")
            self.wait.until(EC.text_to_be_present_in_element((By.ID, "message-list"), "buy cheap watches"))
            self.screenshot("6-moderation")
            self.click(f"button[aria-label='Delete message {spam['id']} for everyone']")
            self.accept()
            self.toast(f"Deleted message {spam['id']} for everyone")
            listener.wait_for("message.deleted", lambda event: event.get("id") == spam["id"])
        finally:
            listener.stop()
        self.wait.until(EC.text_to_be_present_in_element(
            (By.CSS_SELECTOR, f"li[data-message-id='{spam['id']}']"), "deleted"))

    def test_7_the_charts_show_sends_rising_while_a_load_runs(self):
        self.go("health")
        engine = "postgresql" if CLUSTER_NODES else "sqlite"
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "node-table"), engine))
        if CLUSTER_NODES:  # each poll may reach another node: every one shows up, its bus up
            rows = "#node-table tbody tr"
            WebDriverWait(self.browser, 60).until(
                lambda _: len(self.browser.find_elements(By.CSS_SELECTOR, rows)) == CLUSTER_NODES)
            names = set()
            for row in self.browser.find_elements(By.CSS_SELECTOR, rows):
                self.assertRegex(row.text, r"^\S+ ok postgresql ok ok ")
                names.add(row.text.split()[0])
            self.assertEqual(len(names), CLUSTER_NODES, "each node once")
        erin, stop = self.chatd.token("erin"), threading.Event()

        def sends():
            return [value for value in json.loads(self.find("#chart-sends").get_attribute("data-points"))[0]
                    if value is not None]

        idle = WebDriverWait(self.browser, 30).until(lambda _: sends())[-1]
        self.assertLess(idle, 1, "nothing is sent before the load")

        def load():
            while not stop.is_set():
                self.chatd.send(erin, "finn", "load")

        threads = [threading.Thread(target=load) for _ in range(2)]
        for thread in threads:
            thread.start()
        try:
            WebDriverWait(self.browser, 30).until(lambda _: sends()[-1] > 5)
            self.screenshot("7-health-under-load")
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        latency = json.loads(self.find("#chart-latency").get_attribute("data-latest"))
        self.assertTrue(all(value is not None and value > 0 for value in latency), latency)

    def test_7b_rates_and_latencies_come_from_two_scrapes(self):
        histogram = 'chatd_http_request_duration_seconds_bucket{method="POST",route="/v1/messages",le="%s"} %d'
        before = "\n".join([
            'chatd_changes_committed_total{kind="message.created"} 10',
            'chatd_changes_committed_total{kind="message.updated"} 4',
            'chatd_http_requests_total{method="POST",route="/v1/messages",status="201"} 10',
            histogram % ("0.001", 5), histogram % ("0.005", 10), histogram % ("2.5", 10), histogram % ("+Inf", 10)])
        after = "\n".join([
            '# HELP chatd_changes_committed_total Changes committed.',
            'chatd_changes_committed_total{kind="message.created"} 30',
            'chatd_changes_committed_total{kind="message.updated"} 9',
            'chatd_http_requests_total{method="POST",route="/v1/messages",status="201"} 30',
            'chatd_http_requests_total{method="POST",route="/v1/messages",status="500"} 2',
            'chatd_http_requests_total{method="GET",route="unmatched",status="404"} 4',
            histogram % ("0.001", 10), histogram % ("0.005", 28), histogram % ("2.5", 29), histogram % ("+Inf", 32),
            "chatd_realtime_sockets 7"])
        found = self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            import('/admin/metrics.js').then(({ parse, rates }) =>
                done(rates(parse(arguments[0]), parse(arguments[1]), 2)));""", before, after)
        self.assertEqual(
            {key: found[key] for key in ["sends", "requests2xx", "requests4xx", "requests5xx", "p50", "p99", "sockets"]},
            {"sends": 10, "requests2xx": 10, "requests4xx": 2, "requests5xx": 1, "p50": 0.005, "p99": 2.5,
             "sockets": 7})
        self.assertIsNone(found["busLag"])

    def test_8_the_audit_trail_lists_what_the_console_did(self):
        self.go("audit")
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "audit-table"), "message.delete"))
        actions = ["messages.read", "message.delete", "group.delete", "group.owner.transfer", "group.unban",
                   "group.member.scope", "group.ban", "group.member.kick", "group.member.add", "group.create",
                   "user.unsuspend", "user.suspend", "token.revoke.all", "token.issue", "user.create"]
        for _ in range(20):  # 50 entries a page: the console's first actions are a few pages back
            text = self.find("#audit-table").text
            if all(action in text for action in actions) or not self.find("#audit-more").is_displayed():
                break
            rows = len(self.browser.find_elements(By.CSS_SELECTOR, "#audit-table tbody tr"))
            self.click("#audit-more")
            self.wait.until(lambda _: len(self.browser.find_elements(By.CSS_SELECTOR, "#audit-table tbody tr")) > rows)
        for action in actions:
            self.assertIn(action, text)
        self.assertNotIn(ADMIN_KEY, text)
        self.screenshot("8-audit")

    def test_9_keyboard_labels_and_a_phones_width(self):
        self.go("users")
        unlabeled = self.browser.execute_script("""
            return [...document.querySelectorAll('input, select, textarea, button')].filter((control) => {
                const labelled = control.labels?.length || control.getAttribute('aria-label');
                const text = control.tagName === 'BUTTON' && control.textContent.trim();
                return !(labelled || text);
            }).map((control) => control.outerHTML);""")
        self.assertEqual(unlabeled, [])
        self.browser.execute_script("document.querySelector('#nav a').focus()")
        ActionChains(self.browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        self.assertEqual(self.browser.switch_to.active_element.text, "Skip to the content")
        ActionChains(self.browser).send_keys(Keys.ENTER).perform()
        self.assertEqual(self.browser.switch_to.active_element.get_attribute("id"), "main")
        self.assertTrue(self.browser.current_url.endswith("#users"), "the skip link keeps the screen")
        for _ in range(12):
            if self.browser.switch_to.active_element.get_attribute("id") == "user-search":
                break
            ActionChains(self.browser).send_keys(Keys.TAB).perform()
        self.assertEqual(self.browser.switch_to.active_element.get_attribute("id"), "user-search")
        ActionChains(self.browser).send_keys("dora" + Keys.ENTER).perform()
        self.wait.until(EC.text_to_be_present_in_element((By.ID, "user-table"), "Dora Explorer"))
        self.browser.set_window_size(390, 844)
        for screen in ["users", "groups", "health"]:
            self.go(screen)
            self.screenshot(f"9-phone-{screen}")
            overflow = self.browser.execute_script(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            wide = self.browser.execute_script("""
                const width = document.documentElement.clientWidth;
                return [...document.querySelectorAll('body *')]
                    .filter((node) => node.getBoundingClientRect().right > width + 1)
                    .map((node) => node.tagName + '#' + node.id + '.' + node.className);""")
            self.assertLessEqual(overflow, 1, f"{screen} scrolls sideways at a phone's width: {wide}")
        self.browser.set_window_size(1280, 1000)

    def test_zz_no_console_errors(self):
        self.assertEqual(self.console_errors(), [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
