package progress

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// foldersFile lists every lessons folder the lab was given (--lessons), one
// absolute path a line: `lab clean` names those lessons' queues and
// exchanges in any namespace, replay lanes included, even where the
// broker's marks cannot be listed (no management API).
func foldersFile() (string, error) {
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "rmlab", "lessons-folders"), nil
}

// RememberLessons adds dir to the folders the lab was given.
func RememberLessons(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	known, err := LessonsFolders()
	if err != nil || slices.Contains(known, abs) {
		return err
	}
	path, err := foldersFile()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(abs + "\n")
	return err
}

// LessonsFolders are the folders the lab was given, oldest first.
func LessonsFolders() ([]string, error) {
	path, err := foldersFile()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// ForgetLessons drops folders from the list (they no longer exist).
func ForgetLessons(gone []string) error {
	known, err := LessonsFolders()
	if err != nil {
		return err
	}
	path, err := foldersFile()
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, d := range known {
		if !slices.Contains(gone, d) {
			b.WriteString(d + "\n")
		}
	}
	return Write(path, []byte(b.String()))
}
