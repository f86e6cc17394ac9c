package events

import "time"

// PushEvent is the part of GitHub's push webhook a function reads: most of
// it, as handlers declare what they use and the codec skips the rest.
type PushEvent struct {
	Ref          string        `json:"ref"`
	Before       string        `json:"before"`
	After        string        `json:"after"`
	Repository   Repository    `json:"repository"`
	Pusher       Person        `json:"pusher"`
	Organization *Account      `json:"organization,omitempty"`
	Sender       Account       `json:"sender"`
	Created      bool          `json:"created"`
	Deleted      bool          `json:"deleted"`
	Forced       bool          `json:"forced"`
	BaseRef      *string       `json:"base_ref"`
	Compare      string        `json:"compare"`
	Commits      []Commit      `json:"commits"`
	HeadCommit   *Commit       `json:"head_commit"`
	Installation *Installation `json:"installation,omitempty"`
}

// Repository is a GitHub repository as webhooks describe it.
type Repository struct {
	ID              int64    `json:"id"`
	NodeID          string   `json:"node_id"`
	Name            string   `json:"name"`
	FullName        string   `json:"full_name"`
	Private         bool     `json:"private"`
	Owner           Account  `json:"owner"`
	HTMLURL         string   `json:"html_url"`
	Description     string   `json:"description"`
	Fork            bool     `json:"fork"`
	URL             string   `json:"url"`
	CommitsURL      string   `json:"commits_url"`
	CompareURL      string   `json:"compare_url"`
	ContentsURL     string   `json:"contents_url"`
	PullsURL        string   `json:"pulls_url"`
	IssuesURL       string   `json:"issues_url"`
	CreatedAt       int64    `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
	PushedAt        int64    `json:"pushed_at"`
	GitURL          string   `json:"git_url"`
	SSHURL          string   `json:"ssh_url"`
	CloneURL        string   `json:"clone_url"`
	Homepage        *string  `json:"homepage"`
	Size            int      `json:"size"`
	StargazersCount int      `json:"stargazers_count"`
	WatchersCount   int      `json:"watchers_count"`
	Language        string   `json:"language"`
	HasIssues       bool     `json:"has_issues"`
	HasProjects     bool     `json:"has_projects"`
	HasWiki         bool     `json:"has_wiki"`
	ForksCount      int      `json:"forks_count"`
	Archived        bool     `json:"archived"`
	OpenIssuesCount int      `json:"open_issues_count"`
	License         *License `json:"license"`
	Topics          []string `json:"topics"`
	Visibility      string   `json:"visibility"`
	DefaultBranch   string   `json:"default_branch"`
	MasterBranch    string   `json:"master_branch"`
	Organization    string   `json:"organization,omitempty"`
}

// Account is a user or an organisation.
type Account struct {
	Login             string `json:"login"`
	ID                int64  `json:"id"`
	NodeID            string `json:"node_id"`
	AvatarURL         string `json:"avatar_url"`
	GravatarID        string `json:"gravatar_id"`
	URL               string `json:"url"`
	HTMLURL           string `json:"html_url"`
	FollowersURL      string `json:"followers_url"`
	ReposURL          string `json:"repos_url"`
	EventsURL         string `json:"events_url"`
	ReceivedEventsURL string `json:"received_events_url"`
	Type              string `json:"type"`
	SiteAdmin         bool   `json:"site_admin"`
}

// License of a repository.
type License struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	SPDXID string `json:"spdx_id"`
	URL    string `json:"url"`
	NodeID string `json:"node_id"`
}

// Person is a commit author or committer, or the pusher.
type Person struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Username string `json:"username,omitempty"`
}

// Commit is one commit of a push.
type Commit struct {
	ID        string    `json:"id"`
	TreeID    string    `json:"tree_id"`
	Distinct  bool      `json:"distinct"`
	Message   string    `json:"message"`
	Timestamp time.Time `json:"timestamp"`
	URL       string    `json:"url"`
	Author    Person    `json:"author"`
	Committer Person    `json:"committer"`
	Added     []string  `json:"added"`
	Removed   []string  `json:"removed"`
	Modified  []string  `json:"modified"`
}

// Installation of a GitHub App.
type Installation struct {
	ID     int64  `json:"id"`
	NodeID string `json:"node_id"`
}
