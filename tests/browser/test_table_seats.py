

def test_G11_the_focused_control_keeps_the_focus_when_another_players_move_redraws_the_table(
        open_page, server):
    expect = _expect()
    players = [server.player(grant=500) for _ in range(3)]
    table = server.api("POST", "/tables", body={"variant": "six_spot", "starts": "ready"})["id"]
    for seat, player in enumerate(players, start=1):
        server.api("POST", f"/tables/{table}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    page = open_page(f"/pages/table?table={table}", players[0]["key"])
    ready = page.locator("#actions button[data-action='ready']")
    ready.focus()
    expect(ready).to_be_focused()
    before = server.api("GET", f"/tables/{table}", players[0]["key"])["version"]
    # Another player's move: the page redraws the table (a later version) on its next poll.
    server.api("POST", f"/tables/{table}/ready", players[1]["key"], {"seat": 2})
    expect(page.locator("#updated")).not_to_contain_text(f"Table version {before},",
                                                         timeout=UPDATE_MS)
    expect(page.locator("article.seat[data-seat='2'] .badge", has_text="ready")).to_be_visible()
    expect(page.locator("#actions button[data-action='ready']")).to_be_focused()
    # The viewer's own move takes the control away: the focus goes to what is offered next.
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("done.", timeout=UPDATE_MS)
    expect(page.locator("#actions button[data-leave]")).to_be_focused()
